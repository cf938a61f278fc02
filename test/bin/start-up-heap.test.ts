import assert from 'node:assert/strict'
import { test } from 'node:test'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { freePort, serverProcesses } from '../helpers/processes.js'

// V8 starts the young generation at 1 MB a semi-space and doubles it when a scavenge finds many survivors; start-up's
// burst doubled it to its largest (prom-client reads 32 MiB on Node 20, 16 on Node 24), which an idle instance kept
// (docs/performance.md#start-up). Held, it reads 4 MiB on Node 20 and 8 on Node 24 after the first request.
const MIB = 1024 * 1024
const AFTER_START_AT_MOST = 8 * MIB
const KEY = `env-${'k'.repeat(40)}`

/** The young generation's size (prom-client's heap-space gauge, through METRICS_PORT). */
async function youngGenerationBytes (metricsPort: number): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const match = /^petstore_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics)
  assert.ok(match !== null, 'the metrics give the young generation\'s size')
  return Number(match[1])
}

async function startServer (t: Parameters<typeof serverProcesses>[0], env: Record<string, string> = {}): Promise<{ baseUrl: string, metricsPort: number }> {
  const metricsPort = await freePort()
  const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: KEY, METRICS_PORT: String(metricsPort), ...env })
  const first = await fetch(`${server.baseUrl}/v1/pets?limit=20`, { headers: { authorization: `Bearer ${KEY}` } })
  assert.equal(first.status, 200)
  return { baseUrl: server.baseUrl, metricsPort }
}

test('When the build has started and answered its first request, then its young generation is still small; when a load follows, V8 grows it as it did before', async (t) => {
  const { baseUrl, metricsPort } = await startServer(t)
  const idle = await youngGenerationBytes(metricsPort)
  t.diagnostic(`young generation after start-up: ${idle / MIB} MiB`)
  assert.ok(idle <= AFTER_START_AT_MOST, `after start-up the young generation is ${(idle / MIB).toFixed(1)} MiB, more than ${AFTER_START_AT_MOST / MIB}`)

  // ordinary traffic after start: 50 clients at once, each with a body to validate, so that many objects live across scavenges
  const create = (i: number): Promise<Response> => fetch(`${baseUrl}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Load ${i}`, categoryId: 1 + (i % 5), status: 'available' })
  })
  for (let round = 0; round < 40; round++) {
    const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
      const res = await create(round * 50 + i)
      await res.arrayBuffer()
      return res.status
    }))
    assert.deepEqual(new Set(answers), new Set([201]))
    if (await youngGenerationBytes(metricsPort) > idle) break
  }
  const loaded = await youngGenerationBytes(metricsPort)
  t.diagnostic(`young generation after the load: ${loaded / MIB} MiB`)
  assert.ok(loaded > idle, `after the load the young generation is ${(loaded / MIB).toFixed(1)} MiB, as it was after start-up: V8's growth was not given back`)
})

test('When the operator sized the young generation (NODE_OPTIONS --max-semi-space-size), then start-up leaves V8\'s growth as it is', async (t) => {
  const { metricsPort } = await startServer(t, { NODE_OPTIONS: '--max-semi-space-size=16' })
  const idle = await youngGenerationBytes(metricsPort)
  t.diagnostic(`young generation after start-up: ${idle / MIB} MiB`)
  assert.ok(idle > AFTER_START_AT_MOST, `with the operator's size the young generation is ${(idle / MIB).toFixed(1)} MiB: start-up still held it`)
})
