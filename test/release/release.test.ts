import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/infra/config/config.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { childEnv, freePort, PROJECT_ROOT, ServerProcess, within } from '../helpers/processes.js'

/** `nobody`: the release runs as a user that owns nothing of it, as the image's does. */
const UNPRIVILEGED = { uid: 65534, gid: 65534 }
const AS_ROOT = process.getuid?.() === 0
const KEY = /petstore_[A-Za-z0-9_-]{43}/

interface Release {
  /** A directory another user can reach, holding the release, the node binary and the data directories. */
  place: string
  dir: string
  node: string
}

/** Every file under `dir` with its size and modification time: to prove that running the release wrote nothing in it. */
async function snapshot (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return Promise.all(entries.map(async (entry) => {
    const path = join(entry.parentPath, entry.name)
    const info = await stat(path).catch(() => undefined)
    return `${path} ${info?.size ?? '-'} ${info?.mtimeMs ?? '-'}`
  })).then((lines) => lines.sort())
}

/** Runs the release's CLI as the service's user with `env`. */
async function releaseCli (release: Release, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    execFile(release.node, [join(release.dir, 'dist/bin/cli.js'), ...args], { cwd: release.dir, env, timeout: 30_000, ...(AS_ROOT ? UNPRIVILEGED : {}) },
      (error, stdout, stderr) => { resolve({ code: error === null ? 0 : (typeof error.code === 'number' ? error.code : null), stdout, stderr }) })
  })
}

// what the bundled server (dist/bin/server.js) must answer byte for byte as the modules do: the document, and the
// /docs page's parts that are built at run time (the page, its start-up script with our plugin written out)
const SAME_AS_THE_MODULES = ['/v1/openapi.json', '/v1/openapi.yaml', '/v1/asyncapi.json', '/v1/asyncapi.yaml', '/docs', '/docs/static/index.html', '/docs/static/swagger-initializer.js',
  '/docs/static/theme/petstore-plugin.js', '/docs/json', '/docs/static/swagger-ui-bundle.js']

/** The bodies the app built from the source answers `paths` with, configured by `env` on an in-memory store. */
async function answersOfTheModules (env: NodeJS.ProcessEnv, paths: readonly string[]): Promise<Map<string, { status: number, type: unknown, body: Buffer }>> {
  const app = await buildApp({ config: loadConfig({ ...env, DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }) })
  try {
    const answers = new Map<string, { status: number, type: unknown, body: Buffer }>()
    for (const url of paths) {
      const res = await app.inject({ method: 'GET', url })
      answers.set(url, { status: res.statusCode, type: res.headers['content-type'], body: res.rawPayload })
    }
    return answers
  } finally {
    await app.close()
  }
}

/** A data directory only the service's user may write. */
async function dataDirFor (release: Release, name: string): Promise<string> {
  const dir = join(release.place, `data-${name}`)
  await mkdir(dir)
  if (AS_ROOT) await chown(dir, UNPRIVILEGED.uid, UNPRIVILEGED.gid)
  return dir
}

describe('the release directory (npm run release)', () => {
  let release: Release
  let before_: string[]

  before(async () => {
    const place = await mkdtemp(join(tmpdir(), 'petstore-release-'))
    await chmod(place, 0o755)
    const dir = join(place, 'release')
    // exactly what the Dockerfile's build stage runs
    const build = spawn('npm', ['run', 'release', '--', dir], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    build.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    build.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    const code = await within(15 * 60_000, 'npm run release did not finish', new Promise((resolve) => build.once('close', resolve)))
    assert.equal(code, 0, output)
    // the node binary of a test run may sit in a directory only root can enter (scripts/test-on-node.sh)
    const node = join(place, 'node')
    await copyFile(process.execPath, node)
    await chmod(node, 0o755)
    // read-only for everyone; as root, also owned by another user than the one that runs it
    await promisify(execFile)('chmod', ['-R', 'a-w', dir])
    release = { place, dir, node }
    before_ = await snapshot(dir)
  }, { timeout: 15 * 60_000 })

  after(async () => {
    if (release === undefined) return
    await promisify(execFile)('chmod', ['-R', 'u+w', release.dir])
    await rm(release.place, { recursive: true, force: true })
  })

  test('When the release is built, then it holds the build, the migrations, package.json, the lockfile and production node_modules only', async () => {
    assert.deepEqual((await readdir(release.dir)).sort(), ['dist', 'migrations', 'node_modules', 'package-lock.json', 'package.json'])
    const modules = await readdir(join(release.dir, 'node_modules'))
    for (const devOnly of ['typescript', 'tsx', 'eslint', '@petstore']) assert.ok(!modules.includes(devOnly), `${devOnly} is in the release`)
    assert.ok(!(await readdir(join(release.dir, 'dist', 'bin'))).some((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')))
  })

  for (const store of testStores()) {
    test(`When the release runs as another user on a read-only tree (${store}), then it serves, its CLI works, and SIGTERM drains it`, async (t) => {
      const dataDir = await dataDirFor(release, store)
      const port = await freePort()
      const metricsPort = await freePort()
      const env = childEnv({
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
        HOME: dataDir,
        // the suites load the machine: a first /docs build under that load is not overload (test/overload/ tests shedding)
        OVERLOAD_SHEDDING: 'false',
        ...(store === 'postgres' ? { DATABASE_URL: await freshDatabaseUrl(t, 'postgres') } : {})
      })
      const server = new ServerProcess({ env, port, entry: 'build', installation: release.dir, node: release.node, label: `release (${store})`, ...(AS_ROOT ? { runAs: UNPRIVILEGED } : {}) })
      t.after(() => server.kill())

      const key = (await server.waitForStdout(KEY))[0]
      await server.waitUntilHealthy()
      const auth = { authorization: `Bearer ${key}` }
      const created = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Rex', categoryId: 1 }) })
      assert.equal(created.status, 201, await created.clone().text())
      const pet = await created.json() as { id: number }
      const list = await fetch(`${server.baseUrl}/v1/pets`, { headers: auth })
      assert.equal(list.status, 200)
      assert.deepEqual((await list.json() as Array<{ id: number }>).map((p) => p.id), [pet.id])
      assert.equal((await fetch(`${server.baseUrl}/v1/pets/${pet.id}`, { headers: auth })).status, 200)
      const patched = await fetch(`${server.baseUrl}/v1/pets/${pet.id}`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/merge-patch+json' }, body: '{"status":"pending"}' })
      assert.equal(patched.status, 200)
      assert.equal((await patched.json() as { status: string }).status, 'pending')
      const docs = await fetch(`${server.baseUrl}/docs`)
      assert.equal(docs.status, 200)
      assert.match(docs.headers.get('content-type') ?? '', /text\/html/)
      assert.equal((await fetch(`${server.baseUrl}/v1/openapi.json`)).status, 200)
      if (store === 'sqlite') {
        // the release runs the bundle; what it serves must not differ from what the modules serve
        for (const [url, expected] of await answersOfTheModules(env, SAME_AS_THE_MODULES)) {
          const res = await fetch(`${server.baseUrl}${url}`, { redirect: 'manual' })
          assert.equal(res.status, expected.status, url)
          assert.equal(res.headers.get('content-type') ?? undefined, expected.type, url)
          assert.ok(Buffer.from(await res.arrayBuffer()).equals(expected.body), `${url} differs between the bundle and the modules`)
        }
      }
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      assert.match(await metrics.text(), /petstore_http_requests_total\{operation="createPet",method="POST",status="201"\} 1/)

      const keys = await releaseCli(release, ['keys', 'list'], env)
      assert.equal(keys.code, 0, keys.stderr)
      assert.match(keys.stdout, /API keys in/)
      if (store === 'sqlite') {
        const backup = await releaseCli(release, ['backup', join(dataDir, 'backup.db')], env)
        assert.equal(backup.code, 0, backup.stderr)
        assert.match(backup.stdout, /backed up 1 pets/)
      }

      const exit = await server.stop(20_000)
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr)
      assert.match(server.stdout, /shutting down/)
      assert.equal(server.stderr, '')
      assert.deepEqual(await snapshot(release.dir), before_, 'running the release wrote into it')
    })
  }
})
