import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureFreshBuild } from '../../tools/harness/build-freshness.js'
import { descendantPids } from '../../tools/harness/process-tree.js'
import { PROJECT_ROOT, within } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'

/** The run's limit per test, and how long a file's process may outlive its tests, in the run below. */
const TEST_TIMEOUT_MS = 3_000
const EXIT_GRACE_MS = 2_000
/**
 * The run below takes about 10 s here. Past this it has hung, as it did for 30 minutes a file (or for good,
 * on Node 24) before the runner killed what outlives its tests: a bound against a hang, not a speed.
 */
const RUN_DEADLINE_MS = 90_000

// the test files the runner runs: two that hang with an interval open, as a test that left a server or a
// timer behind does (past a timeout of their own and past the run's limit), and one that passes
const FIXTURES: Record<string, string> = {
  'own-timeout.test.ts': `import { test } from 'node:test'
setInterval(() => {}, 1_000)
test('When a test never settles, then it fails at its own timeout', { timeout: 2_000 }, async () => { await new Promise(() => {}) })
`,
  'run-limit.test.ts': `import { test } from 'node:test'
setInterval(() => {}, 1_000)
test('When a test without a timeout never settles, then it fails at the run\\'s limit', async () => { await new Promise(() => {}) })
`,
  'passes.test.ts': `import { test } from 'node:test'
test('When a test passes beside them, then it passes', async () => { await new Promise((resolve) => setTimeout(resolve, 200)) })
`
}

test('When test files hang past a test\'s limit with a handle left open, then the run still ends, failed, naming their tests, and the other file passes', { timeout: RUN_DEADLINE_MS + 30_000 }, async (t) => {
  const dir = await tempDir(t)
  for (const [name, text] of Object.entries(FIXTURES)) await writeFile(join(dir, name), text)
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_SUITES_DIR: dir, TEST_TIMEOUT_MS: String(TEST_TIMEOUT_MS), TEST_EXIT_GRACE_MS: String(EXIT_GRACE_MS) }
  // this file's process is itself a child of the runner; the run below is a run of its own, on no database
  for (const name of ['NODE_TEST_CONTEXT', 'TEST_DATABASE_URL', 'TEST_STORES', 'TEST_FILE_TIMES']) delete env[name]
  // the runner builds dist/ first when src/ is newer (this file run on its own): not within the deadline
  ensureFreshBuild()
  const runner = spawn(process.execPath, ['--import', 'tsx', 'scripts/run-test-suites.ts'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => {
    for (const pid of [...descendantPids(runner.pid ?? 0), runner.pid ?? 0]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // it had ended
      }
    }
  })
  let output = ''
  runner.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  runner.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })

  const [code] = await within(RUN_DEADLINE_MS, 'the run on hanging test files did not end', once(runner, 'close'))
    .catch((error: unknown) => { throw new Error(`${error instanceof Error ? error.message : String(error)}; its output:\n${output}`) }) as [number | null]

  assert.equal(code, 1, output)
  assert.match(output, /✖ When a test never settles, then it fails at its own timeout[^\n]*\n\s*'test timed out after 2000ms'/)
  assert.match(output, new RegExp(`✖ When a test without a timeout never settles, then it fails at the run's limit[^\\n]*\\n\\s*'test timed out after ${TEST_TIMEOUT_MS}ms'`))
  assert.match(output, /✔ When a test passes beside them, then it passes/)
  assert.match(output, /^ℹ pass 1$/m)
})
