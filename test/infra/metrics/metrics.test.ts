import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { buildTestApp, createdPet, patchPet, postPet, testStores, type TestApp } from '../../helpers/build-app.js'
import { freePort, serverProcesses } from '../../helpers/processes.js'
import { freshDatabaseUrl } from '../../helpers/databases.js'

/**
 * The value of the sample `name` whose labels include `labels`, in Prometheus text format;
 * undefined when no such sample exists. Fails when several samples match.
 */
function sample (text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const matches: number[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found: Record<string, string> = {}
    for (const [, key = '', value = ''] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[key] = value
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) matches.push(Number(match[3]))
  }
  assert.ok(matches.length <= 1, `${matches.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return matches[0]
}

async function metricsText (api: TestApp): Promise<string> {
  return api.app.metrics.registry.metrics()
}

for (const store of testStores()) {
  describe(`metrics registry (${store})`, () => {
    test('When listPets, createPet, getPet, a 401 and a 404 were answered, then each is counted by operation, method and status', async (t) => {
      const api = await buildTestApp(t, { store })

      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)
      const created = await postPet(api, { name: 'Rex', categoryId: 3 })
      assert.equal(created.statusCode, 201)
      assert.equal((await api.app.inject({ method: 'GET', url: `/v1/pets/${String(created.json().id)}`, headers: api.auth })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets' })).statusCode, 401)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/no-such-route', headers: api.auth })).statusCode, 404)
      const text = await metricsText(api)

      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'listPets', method: 'GET', status: '200' }), 2)
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'createPet', method: 'POST', status: '201' }), 1)
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'getPet', method: 'GET', status: '200' }), 1)
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'listPets', method: 'GET', status: '401' }), 1)
      // an unknown path is one label value, whatever the path: no label per URL
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'unmatched', method: 'GET', status: '404' }), 1)
      assert.doesNotMatch(text, /no-such-route/)
    })

    test('When listPets was answered, then its latency is in the histogram, and the store call is timed as ok', async (t) => {
      const api = await buildTestApp(t, { store })

      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)
      const text = await metricsText(api)

      assert.equal(sample(text, 'petstore_http_request_duration_seconds_bucket', { operation: 'listPets', status: '200', le: '+Inf' }), 1)
      assert.equal(sample(text, 'petstore_http_request_duration_seconds_count', { operation: 'listPets', status: '200' }), 1)
      assert.ok((sample(text, 'petstore_http_request_duration_seconds_sum', { operation: 'listPets', status: '200' }) ?? -1) >= 0)
      assert.ok((sample(text, 'petstore_store_query_duration_seconds_count', { method: 'listPets', outcome: 'ok' }) ?? 0) >= 1)
      assert.equal(sample(text, 'petstore_store_query_duration_seconds_count', { method: 'listPets', outcome: 'error' }), undefined)
      // the key look-up is a store call too
      assert.ok((sample(text, 'petstore_store_query_duration_seconds_count', { method: 'findActiveApiKeyByHash', outcome: 'ok' }) ?? 0) >= 1)
    })

    test('When getPet is called, then each authenticated call is counted under the key name; unauthenticated ones are not', async (t) => {
      const envKey = `env-${randomBytes(24).toString('base64url')}`
      const api = await buildTestApp(t, { store, env: { PETSTORE_API_KEYS: envKey } })
      const created = await postPet(api, { name: 'Rex', categoryId: 3 })
      const url = `/v1/pets/${String(created.json().id)}`

      const first = await api.app.inject({ method: 'GET', url, headers: api.auth })
      assert.equal(first.statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url, headers: { ...api.auth, 'if-none-match': String(first.headers.etag) } })).statusCode, 304)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets/999', headers: api.auth })).statusCode, 404)
      assert.equal((await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${envKey}` } })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url })).statusCode, 401)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)
      const text = await metricsText(api)

      assert.equal(sample(text, 'petstore_deprecated_operation_calls_total', { operation: 'getPet', api_key: 'test' }), 3)
      assert.equal(sample(text, 'petstore_deprecated_operation_calls_total', { operation: 'getPet', api_key: 'environment' }), 1)
      assert.doesNotMatch(text, new RegExp(envKey), 'a key never becomes a label')
      assert.doesNotMatch(text, new RegExp(api.key))
    })

    test('When updatePet moves pets between statuses, then each move is counted by from and to; a kept status, a refusal and a rename are not', async (t) => {
      const api = await buildTestApp(t, { store })
      const rex = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const tom = await createdPet(api, { name: 'Tom', categoryId: 3 })

      for (const [pet, patch, status] of [
        [rex, { status: 'pending' }, 200], [rex, { status: 'available' }, 200], [rex, { status: 'pending' }, 200], [rex, { status: 'sold' }, 200],
        [tom, { status: 'sold' }, 200], [tom, { status: 'sold' }, 200], [tom, { status: 'available' }, 409], [tom, { name: 'Tommy' }, 200]
      ] as const) {
        assert.equal((await patchPet(api, pet.id, patch)).statusCode, status)
      }
      const text = await metricsText(api)

      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'available', to: 'pending' }), 2)
      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'pending', to: 'available' }), 1)
      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'pending', to: 'sold' }), 1)
      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'available', to: 'sold' }), 1)
      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'sold', to: 'sold' }), undefined)
      assert.equal(sample(text, 'petstore_pet_transitions_total', { from: 'sold', to: 'available' }), undefined)
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'updatePet', method: 'PATCH', status: '409' }), 1)
      assert.ok((sample(text, 'petstore_store_query_duration_seconds_count', { method: 'updatePet', outcome: 'ok' }) ?? 0) >= 8)
    })

    test('When the per-key limit turns requests away, then the rejections are counted by policy', async (t) => {
      const api = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '1' } })

      const statuses: number[] = []
      for (let i = 0; i < 3; i++) statuses.push((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode)
      const text = await metricsText(api)

      assert.deepEqual(statuses, [200, 429, 429])
      assert.equal(sample(text, 'petstore_rate_limit_rejections_total', { policy: 'per-key' }), 2)
      assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'listPets', method: 'GET', status: '429' }), 2)
    })
  })
}

describe('metrics registry without a metrics listener', () => {
  test('When the app is built without METRICS_PORT, then its registry holds no process metrics', async (t) => {
    const api = await buildTestApp(t)

    await api.app.inject({ method: 'GET', url: '/healthz' })
    const text = await metricsText(api)

    assert.equal(sample(text, 'petstore_http_requests_total', { operation: 'getHealth', method: 'GET', status: '200' }), 1)
    assert.doesNotMatch(text, /petstore_process_cpu_user_seconds_total/)
  })
})

describe('metrics listener (server process)', () => {
  test('When METRICS_PORT is set, then GET /metrics there serves process and request metrics, other paths are 404, and the API port has no /metrics', async (t) => {
    const servers = serverProcesses(t)
    const databaseUrl = await freshDatabaseUrl(t, 'sqlite')
    const key = `env-${randomBytes(24).toString('base64url')}`
    const metricsPort = await freePort()
    const server = await servers.start({ DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: key, METRICS_PORT: String(metricsPort) })
    await server.waitForStdout(/metrics served at GET \/metrics/)
    const metricsUrl = `http://127.0.0.1:${metricsPort}`

    const before = await fetch(`${metricsUrl}/metrics`)
    const beforeText = await before.text()
    const api = await fetch(`${server.baseUrl}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
    await api.arrayBuffer()
    const after = await fetch(`${metricsUrl}/metrics`)
    const afterText = await after.text()
    const other = await fetch(`${metricsUrl}/other`)
    const posted = await fetch(`${metricsUrl}/metrics`, { method: 'POST' })
    const onApiPort = await fetch(`${server.baseUrl}/metrics`)

    assert.equal(before.status, 200)
    assert.match(String(before.headers.get('content-type')), /^text\/plain/)
    assert.ok((sample(beforeText, 'petstore_process_cpu_user_seconds_total') ?? -1) >= 0, 'default process metrics, prefixed petstore_')
    assert.equal(sample(beforeText, 'petstore_http_requests_total', { operation: 'listPets' }), undefined)
    assert.equal(api.status, 200)
    assert.equal(after.status, 200)
    assert.equal(sample(afterText, 'petstore_http_requests_total', { operation: 'listPets', method: 'GET', status: '200' }), 1)
    assert.equal(other.status, 404)
    assert.ok((await other.text()).length > 0)
    assert.equal(posted.status, 404)
    await posted.arrayBuffer()
    assert.equal(onApiPort.status, 404)
    const body = await onApiPort.json() as Record<string, unknown>
    assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'])
    assert.equal(body.code, 'not_found')
    assert.equal((await server.stop()).code, 0)
  })
})
