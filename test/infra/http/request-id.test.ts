import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, createdPet, patchPetWhileLocked, testStores, type TestApp } from '../../helpers/build-app.js'
import { assertError } from '../../helpers/assertions.js'
import { captureLogs, type CapturedLogs } from '../../helpers/log-capture.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

type Ask = (api: TestApp, headers?: Record<string, string>) => Promise<LightMyRequestResponse>

// each case: an answer of another kind, how to get it, and its status
const ANSWERS: Array<{ name: string, status: number, ask: Ask }> = [
  { name: 'a 200', status: 200, ask: (api, headers) => api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, ...headers } }) },
  { name: 'a 401', status: 401, ask: (api, headers) => api.app.inject({ method: 'GET', url: '/v1/pets', headers }) },
  { name: 'a 404', status: 404, ask: (api, headers) => api.app.inject({ method: 'GET', url: '/v1/nothing-here', headers: { ...api.auth, ...headers } }) },
  { name: 'a 400 (limit=0)', status: 400, ask: (api, headers) => api.app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: { ...api.auth, ...headers } }) },
  {
    name: 'a 413 (body too large)',
    status: 413,
    ask: (api, headers) => api.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...api.auth, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify({ name: 'x'.repeat(20_000), categoryId: 1 })
    })
  },
  {
    name: 'a 400 (malformed JSON)',
    status: 400,
    ask: (api, headers) => api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json', ...headers }, payload: '{"name": ' })
  }
]

/** Every log line that names a request, parsed. */
function requestLines (logs: CapturedLogs): Array<Record<string, unknown>> {
  return logs.records().filter((record) => 'reqId' in record)
}

describe('X-Request-Id', () => {
  for (const { name, status, ask } of ANSWERS) {
    test(`When the answer is ${name} and no id came in, then it carries a new UUID in X-Request-Id`, async (t) => {
      const api = await buildTestApp(t)

      const res = await ask(api)

      assert.equal(res.statusCode, status, res.body)
      assert.match(String(res.headers['x-request-id']), UUID)
    })

    test(`When the answer is ${name} and a valid id came in, then it echoes that id`, async (t) => {
      const api = await buildTestApp(t)

      const res = await ask(api, { 'x-request-id': 'abc-123' })

      assert.equal(res.statusCode, status, res.body)
      assert.equal(res.headers['x-request-id'], 'abc-123')
    })
  }

  test('When requests carry no id, then each gets an id of its own', async (t) => {
    const api = await buildTestApp(t)

    const ids = new Set<string>()
    for (let i = 0; i < 5; i++) ids.add(String((await api.app.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id']))

    assert.equal(ids.size, 5)
    for (const id of ids) assert.match(id, UUID)
  })

  for (const id of ['abc-123', 'trace/span:1', '01HZY3K7Q6V1M9N8B5C4X2W0ZT', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6', 'user@host.example', 'a+b=c_d.e', 'x'.repeat(128), '7']) {
    test(`When X-Request-Id is the valid id "${id.length > 40 ? `${id.slice(0, 10)}… (${id.length} characters)` : id}", then the answer echoes it exactly`, async (t) => {
      const api = await buildTestApp(t)

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': id } })

      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['x-request-id'], id)
    })
  }

  // each case: an incoming id that must not be kept, and what is wrong with it
  const INVALID: Array<[string, string]> = [
    ['x'.repeat(129), 'too long (129 characters)'],
    ['abc 123', 'with a space'],
    ['abc\ndef', 'with a line feed'],
    ['abc\r\ndef', 'with CR LF'],
    ['abc\u2028def', 'with a Unicode line separator'],
    ['abc\tdef', 'with a tab'],
    ['caf\u00e9', 'with a non-ASCII letter'],
    ['"quoted"', 'with quotes'],
    ['<script>', 'with angle brackets'],
    ['a,b', 'with a comma (two ids joined)'],
    ['', 'empty']
  ]
  for (const [id, what] of INVALID) {
    test(`When X-Request-Id is ${what}, then it is replaced by a new UUID`, async (t) => {
      const api = await buildTestApp(t)

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': id } })

      assert.equal(res.statusCode, 200, res.body)
      assert.match(String(res.headers['x-request-id']), UUID)
    })
  }
})

// the log's lines come from every layer a request crosses, the store's errors included: on each store
for (const store of testStores()) {
  describe(`request id in the log (${store})`, () => {
    test('When a valid id came in, then every log line about the request carries it as reqId', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': 'trace/span:1' } })

      assert.equal(res.statusCode, 200, res.body)
      const lines = requestLines(logs)
      assert.ok(lines.length >= 2, `expected at least the incoming and completed lines, got ${lines.length}`)
      for (const line of lines) assert.equal(line.reqId, 'trace/span:1')
      assert.deepEqual(lines.map((line) => line.msg).filter((msg) => msg === 'incoming request' || msg === 'request completed'), ['incoming request', 'request completed'])
    })

    test('When no id came in and the request fails, then every line about it (rejection included) carries the id the answer names', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: api.auth })

      assert.equal(res.statusCode, 400, res.body)
      const id = String(res.headers['x-request-id'])
      assert.match(id, UUID)
      const lines = requestLines(logs)
      assert.ok(lines.some((line) => line.msg === 'request rejected'), 'the rejection is logged')
      for (const line of lines) assert.equal(line.reqId, id)
    })

    test('When several requests are logged, then each line carries the id of its own request', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })

      const ids = ['first-1', 'second-2', 'third-3']
      for (const id of ids) await api.app.inject({ method: 'GET', url: `/v1/pets?limit=${ids.indexOf(id) + 1}`, headers: { ...api.auth, 'x-request-id': id } })

      const lines = requestLines(logs)
      for (const id of ids) {
        const limit = ids.indexOf(id) + 1
        const incoming = lines.filter((line) => line.msg === 'incoming request' && line.reqId === id)
        assert.equal(incoming.length, 1, `one incoming line for ${id}`)
        assert.equal((incoming[0]?.req as { url?: string } | undefined)?.url, `/v1/pets?limit=${limit}`)
        assert.equal(lines.filter((line) => line.msg === 'request completed' && line.reqId === id).length, 1, `one completed line for ${id}`)
      }
    })

    test('When an id tries to forge a log line, then it is replaced, and the log holds neither the forged line nor the text', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })
      const forged = 'x\n{"level":60,"msg":"FORGED"}'

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': forged } })

      const id = String(res.headers['x-request-id'])
      assert.match(id, UUID)
      assert.ok(logs.lines.length > 0)
      for (const line of logs.lines) assert.ok(!line.includes('FORGED'), line)
      for (const line of requestLines(logs)) assert.equal(line.reqId, id)
    })

    test('When the store fails a request (503), then every line about it, the store error\'s included, carries the id the answer names', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { DATABASE_TIMEOUT_MS: '300' } })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const before = logs.records().length
      // another writer holds the pet longer than the store waits for it
      const res = await patchPetWhileLocked(api, pet.id, { status: 'sold' })

      assertError(res, 'service_unavailable')
      const id = String(res.headers['x-request-id'])
      assert.match(id, UUID)
      const records = logs.records().slice(before)
      const storeErrors = records.filter((record) => (record.err as { type?: string } | undefined)?.type === 'StoreUnavailableError')
      assert.equal(storeErrors.length, 1, `one line tells the store error: ${JSON.stringify(records)}`)
      assert.equal(storeErrors[0]?.msg, 'request failed: the store is unavailable')
      assert.equal(storeErrors[0]?.reqId, id, 'the store error names its request')
      const lines = requestLines(logs).slice(-3)
      assert.deepEqual(lines.map((line) => line.msg), ['incoming request', 'request failed: the store is unavailable', 'request completed'])
      assert.equal(lines[2]?.statusCode, 503)
      for (const line of lines) assert.equal(line.reqId, id)
    })
  })
}
