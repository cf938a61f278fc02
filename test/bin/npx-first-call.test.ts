import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, stat, symlink } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { promisify } from 'node:util'
import { cloneWorkingTree, npm } from '../helpers/install.js'
import { childEnv, PROJECT_ROOT } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'

// npm 11 runs `npx petstore` in this project by installing the project itself into its npx cache (a link
// to it), which runs its `prepare`: the first call on a clone is as fast as that prepare, which must build
// nothing npm install built. Its time is reported, not bounded: a loaded machine took 14 s (timings belong to
// the bench, farm-bench for whole commands)

/** An npm registry that answers nothing and records every request made of it. */
async function recordingRegistry (t: TestContext): Promise<{ url: string, requests: string[] }> {
  const requests: string[] = []
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`)
    response.writeHead(404, { 'content-type': 'application/json' }).end('{}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, requests }
}

const modified = async (file: string): Promise<number> => (await stat(file)).mtimeMs

test('When a fresh clone is installed, then its first npx petstore answers, builds nothing and asks no registry', { timeout: 10 * 60_000 }, async (t) => {
  // a clone after `npm install`: its packages (linked to the repository's), then npm's last step, `prepare`
  const clone = await cloneWorkingTree(t)
  if (!existsSync(join(clone, 'node_modules'))) await symlink(join(PROJECT_ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir')
  const prepared = await npm(clone, ['run', 'prepare'])
  assert.equal(prepared.code, 0, prepared.output)
  const built = ['dist/bin/server.js', 'dist/bin/cli.js', 'clients/typescript/dist/index.js'].map((file) => join(clone, file))
  const before = await Promise.all(built.map(modified))

  // a user's first npx: an npx cache of its own, empty, and a registry that records what is asked of it
  const cache = await tempDir(t)
  const registry = await recordingRegistry(t)
  const started = performance.now()
  const { stdout } = await promisify(execFile)('npx', ['petstore', '--help'], { cwd: clone, env: childEnv({ npm_config_cache: cache, npm_config_registry: registry.url }), timeout: 120_000 })
  const ms = performance.now() - started

  t.diagnostic(`the first npx petstore --help took ${Math.round(ms)} ms`)
  assert.match(stdout, /^Usage: petstore <command>/)
  // it was a first call: npx installed the project into the empty cache (and so ran its prepare)
  const installs = await readdir(join(cache, '_npx'))
  assert.ok(installs.some((dir) => existsSync(join(cache, '_npx', dir, 'node_modules/petstore'))), `the npx cache holds no petstore: ${installs.join(', ')}`)
  assert.deepEqual(registry.requests, [], 'npx asked the registry')
  assert.deepEqual(await Promise.all(built.map(modified)), before, 'npx\'s install rebuilt what npm install had built')
})
