import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { cp, stat, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { test, type TestContext } from 'node:test'
import { tempDir } from '../helpers/build-app.js'
import { childEnv, copyInstallation, freePort, PROJECT_ROOT, within } from '../helpers/processes.js'
import { ensureFreshBuild } from '../../tools/harness/build-freshness.js'

/** `npm start` in `dir` until /healthz answers; what it printed by then. The server is stopped when the test ends. */
async function npmStart (t: TestContext, dir: string): Promise<string> {
  const port = await freePort()
  // its own process group: npm start runs `prestart`, then the server under a shell; a signal to the group reaches all three
  const child = spawn('npm', ['start'], { cwd: dir, env: childEnv({ HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise((resolve) => child.once('close', resolve))
  t.after(async () => {
    try { process.kill(-child.pid!, 'SIGTERM') } catch {}
    await within(20_000, 'npm start did not stop on SIGTERM', exited)
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  await within(4 * 60_000, 'npm start did not serve /healthz', (async () => {
    while (!(await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.ok, () => false))) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`)
      await sleep(100)
    }
  })())
  return output
}

const modified = async (file: string): Promise<number> => (await stat(file)).mtimeMs

test('When npm start runs with dist/ current, then it builds nothing; after a change to src/, it rebuilds, then serves', { timeout: 6 * 60_000 }, async (t) => {
  ensureFreshBuild()
  const dir = await tempDir(t)
  await copyInstallation(dir)
  // and what the build reads, as old as they are in the repository, where dist/ is current
  for (const entry of ['scripts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) {
    await cp(join(PROJECT_ROOT, entry), join(dir, entry), { recursive: true, preserveTimestamps: true })
  }
  const bundle = join(dir, 'dist/bin/server.js')
  const built = await modified(bundle)

  const current = await npmStart(t, dir)

  assert.match(current, /dist\/ is newer than src\/ and the build's inputs: not rebuilt/)
  assert.doesNotMatch(current, /> node scripts\/build\.js/)
  assert.equal(await modified(bundle), built, 'npm start rebuilt a current dist/')
  // the default store it created: the service's user's alone (docs/operations.md#file-modes)
  assert.equal((await stat(join(dir, 'data'))).mode & 0o777, 0o700)
  assert.equal((await stat(join(dir, 'data/petstore.db'))).mode & 0o777, 0o600)

  const later = new Date(Date.now() + 1000)
  await utimes(join(dir, 'src/bin/server.ts'), later, later)
  const changed = await npmStart(t, dir)

  assert.match(changed, /dist\/ is older than src\/bin\/server\.ts: npm run build/)
  assert.match(changed, /> node scripts\/build\.js/)
  assert.ok(await modified(bundle) > later.getTime(), 'npm start did not rebuild after src/ changed')
})
