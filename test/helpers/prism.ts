import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { freePort } from '../../tools/harness/free-port.js'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { tempDir } from './temp-dir.js'

/** A Prism validation proxy the test started. */
export interface PrismProxy {
  /** Where to send requests: `http://127.0.0.1:<port>`. */
  url: string
  /** Everything Prism printed so far (its log names each violation it found). */
  output: () => string
}

// Prism parses and indexes the document before it listens: a few seconds on a busy machine
const START_TIMEOUT_MS = 60_000

/**
 * Prism reads a document given by URL with a polyfilled AbortSignal that Node 24's own fetch refuses
 * ("Expected signal to be an instance of AbortSignal"), so a served document is fetched here, as
 * served, and handed to Prism as a file.
 */
async function localCopy (t: TestContext, document: string): Promise<string> {
  if (!/^https?:/.test(document)) return document
  const res = await fetch(document)
  if (!res.ok) throw new Error(`${document} answered ${res.status}`)
  const file = join(await tempDir(t), 'served-openapi.json')
  await writeFile(file, await res.text())
  return file
}

/**
 * Starts `prism proxy` in front of `upstream`, validating each answer against `document` (a URL or
 * a file): with `--errors`, an answer that breaks the document is replaced by Prism's own 500
 * problem. Requests are not validated (`--validate-request=false`), so that a deliberately invalid
 * request reaches the service, whose refusal is what is checked; CORS is left to the service. The
 * process is stopped when the test ends.
 */
export async function startPrismProxy (t: TestContext, document: string, upstream: string): Promise<PrismProxy> {
  const port = await freePort()
  const file = await localCopy(t, document)
  const prism = spawn(process.execPath, [`${PROJECT_ROOT}node_modules/@stoplight/prism-cli/dist/index.js`, 'proxy', file, upstream,
    '--errors', '--validate-request=false', '--cors=false', '--host', '127.0.0.1', '--port', String(port)],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } })
  let output = ''
  prism.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  prism.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const exited = new Promise<void>((resolve) => { prism.once('exit', () => { resolve() }) })
  t.after(async () => {
    prism.kill('SIGTERM')
    await exited
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`Prism did not start within ${START_TIMEOUT_MS} ms:\n${output}`)) }, START_TIMEOUT_MS)
    const check = (): void => {
      if (!output.includes('Prism is listening')) return
      clearTimeout(timer)
      resolve()
    }
    prism.stdout.on('data', check)
    prism.once('exit', (code) => { clearTimeout(timer); reject(new Error(`Prism exited with ${String(code)}:\n${output}`)) })
  })
  return { url: `http://127.0.0.1:${port}`, output: () => output }
}
