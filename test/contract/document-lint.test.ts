import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import { promisify } from 'node:util'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { buildTestApp, tempDir } from '../helpers/build-app.js'

const run = promisify(execFile)

// the document as a production deployment serves it: https servers, staging, CORS for a storefront
const PRODUCTION = {
  PUBLIC_BASE_URL: 'https://api.petstore.test/v1',
  STAGING_BASE_URL: 'https://staging.petstore.test/v1',
  CORS_ORIGINS: 'https://shop.petstore.test'
}

/** The served document, JSON and YAML, written to files the linters read. */
async function servedDocuments (t: TestContext): Promise<{ json: string, yaml: string }> {
  const { app } = await buildTestApp(t, { env: PRODUCTION })
  const dir = await tempDir(t)
  const files = { json: join(dir, 'openapi.json'), yaml: join(dir, 'openapi.yaml') }
  for (const [format, file] of Object.entries(files)) {
    const res = await app.inject({ method: 'GET', url: `/v1/openapi.${format}` })
    assert.equal(res.statusCode, 200)
    await writeFile(file, res.body)
  }
  return files
}

/** Runs a linter's CLI (node_modules) from the project root, where its config file lives; it may exit non-zero on findings. */
async function lint (cli: string, args: readonly string[]): Promise<string> {
  try {
    return (await run(process.execPath, [join(PROJECT_ROOT, 'node_modules', cli), ...args], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 })).stdout
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string, stderr?: string }
    if (stdout === undefined || stdout === '') throw new Error(`${cli} failed: ${stderr ?? String(error)}`)
    return stdout
  }
}

interface SpectralFinding { code: string, message: string, path: string[], severity: number }
interface RedoclyProblem { ruleId: string, message: string, severity: string, location: Array<{ pointer?: string }> }

describe('the served document, checked by the ecosystem\'s linters', () => {
  test('When Spectral lints it with spectral:oas and the OWASP API Security ruleset (.spectral.yaml), then it finds no error', async (t) => {
    const { json, yaml } = await servedDocuments(t)

    for (const file of [json, yaml]) {
      const output = await lint('@stoplight/spectral-cli/dist/index.js', ['lint', file, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'])

      const findings = JSON.parse(output === '' ? '[]' : output) as SpectralFinding[]
      // severity 0 is an error; warnings are reported as diagnostics
      const errors = findings.filter((finding) => finding.severity === 0)
      assert.deepEqual(errors.map((finding) => `${finding.code} at ${finding.path.join('.')}: ${finding.message}`), [], file)
      t.diagnostic(`${file}: ${findings.length} warnings (${[...new Set(findings.map((finding) => finding.code))].join(', ')})`)
    }
  })

  test('When Redocly lints it with its recommended-strict rules (redocly.yaml), then it finds no problem', async (t) => {
    const { json, yaml } = await servedDocuments(t)

    for (const file of [json, yaml]) {
      const output = await lint('@redocly/cli/bin/cli.js', ['lint', file, '--config', 'redocly.yaml', '--format', 'json'])

      const report = JSON.parse(output.slice(output.indexOf('{'))) as { problems: RedoclyProblem[] }
      assert.deepEqual(report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`), [], file)
    }
  })
})
