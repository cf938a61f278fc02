import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { tempDir } from '../helpers/build-app.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { freePort, serverProcesses } from '../helpers/processes.js'

// what a default deployment (SQLite, no tracing) never uses, so its start must not load it (docs/performance.md#start-up):
// the PostgreSQL driver (which loads Node's fetch implementation at its own load), and the OpenTelemetry API (prom-client
// requires it for exemplars, which the service never enables: the bundle's stand-in, scripts/build.js)
const NOT_AT_START = /\/node_modules\/(pg|pg-[a-z]+|@opentelemetry\/api)\//

test('When the build on SQLite with the defaults (metrics on) has answered its first request, then it has loaded no module of the PostgreSQL driver or the OpenTelemetry API, and its process metrics are exposed', async (t) => {
  const dir = await tempDir(t)
  const preload = join(dir, 'loaded-modules.cjs')
  const loaded = join(dir, 'loaded.json')
  // CommonJS modules, the externals' among them, stay in require.cache: written as the process exits
  await writeFile(preload, `process.on('exit', () => { require('node:fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))) })\n`)
  const key = `env-${'k'.repeat(40)}`
  const metricsPort = await freePort()
  const server = await serverProcesses(t).start({
    DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'),
    PETSTORE_API_KEYS: key,
    METRICS_PORT: String(metricsPort),
    NODE_OPTIONS: `--require ${preload}`
  })

  const res = await fetch(`${server.baseUrl}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
  assert.equal(res.status, 200)
  // prom-client's CPU counters, the module that asked for the API, count without it
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  assert.match(metrics, /^petstore_process_cpu_seconds_total \d/m)
  await server.stop()

  const modules = JSON.parse(await readFile(loaded, 'utf8')) as string[]
  assert.ok(modules.some((path) => path.includes('/node_modules/better-sqlite3')), 'the record holds the modules the start loaded')
  assert.deepEqual(modules.filter((path) => NOT_AT_START.test(path)), [])
})
