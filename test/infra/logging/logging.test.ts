import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { generateApiKey } from '../../../src/capabilities/keys/api-keys.js'
import { redactUrl } from '../../../src/infra/logging/logging.js'
import { buildTestApp, testStores, type TestApp } from '../../helpers/build-app.js'
import { assertError } from '../../helpers/assertions.js'
import { captureLogs, recoverableText, type CapturedLogs, type LogRecord } from '../../helpers/log-capture.js'

/** Requests that carry `key` everywhere a client might put it, valid or not, succeeding or failing. */
function requestsCarrying (key: string): InjectOptions[] {
  const json = { 'content-type': 'application/json' }
  const bearer = { authorization: `Bearer ${key}` }
  return [
    { method: 'GET', url: '/v1/pets', headers: bearer },
    { method: 'GET', url: '/v1/pets', headers: { authorization: `bearer ${key}` } },
    { method: 'GET', url: '/v1/pets', headers: { authorization: `BEARER  ${key}` } },
    { method: 'GET', url: '/v1/pets', headers: { authorization: `Basic ${key}` } },
    { method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key} extra` } },
    { method: 'GET', url: '/v1/pets', headers: { authorization: key } },
    { method: 'GET', url: '/v1/pets', headers: { 'x-api-key': key } },
    { method: 'GET', url: '/v1/pets', headers: { cookie: `session=${key}` } },
    { method: 'GET', url: '/v1/pets', headers: { 'proxy-authorization': `Bearer ${key}` } },
    { method: 'GET', url: `/v1/pets?access_token=${key}` },
    { method: 'GET', url: `/v1/pets?api_key=${key}`, headers: bearer },
    { method: 'GET', url: `/v1/pets?token=${key}&limit=5`, headers: bearer },
    { method: 'GET', url: `/v1/pets?limit=5&apiKey=${encodeURIComponent(key)}&status=sold`, headers: bearer },
    { method: 'GET', url: `/v1/pets?ACCESS_TOKEN=${key}&limit=0`, headers: bearer },
    { method: 'GET', url: `/v1/pets/1?key=${key}`, headers: bearer },
    { method: 'GET', url: '/v1/pets/1', headers: bearer },
    { method: 'GET', url: '/v1/pets/abc', headers: bearer },
    { method: 'GET', url: `/v1/unknown?auth=${key}`, headers: bearer },
    { method: 'DELETE', url: `/v1/pets?bearer=${key}`, headers: bearer },
    { method: 'POST', url: '/v1/pets', headers: { ...bearer, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) },
    { method: 'POST', url: '/v1/pets', headers: { ...bearer, ...json, 'idempotency-key': 'create-1' }, payload: JSON.stringify({ name: 'Tom', categoryId: 2 }) },
    { method: 'POST', url: '/v1/pets', headers: { ...bearer, ...json }, payload: '{"name": "Rex",' },
    { method: 'POST', url: '/v1/pets', headers: { ...bearer, ...json }, payload: JSON.stringify({ name: 'Rex' }) },
    { method: 'POST', url: '/v1/pets', headers: { ...bearer, 'content-type': 'text/plain' }, payload: 'hello' },
    { method: 'GET', url: '/healthz', headers: bearer },
    { method: 'GET', url: '/nowhere', headers: bearer }
  ]
}

async function send (api: TestApp, requests: InjectOptions[]): Promise<number[]> {
  const statuses: number[] = []
  for (const request of requests) statuses.push((await api.app.inject(request)).statusCode)
  return statuses
}

/** The log holds at least one JSON line per request, and none from which any of `secrets` can be read. */
function assertNoSecretLogged (logs: CapturedLogs, requestCount: number, secrets: string[]): void {
  const records = logs.records()
  assert.ok(records.length >= requestCount, `expected at least ${requestCount} log lines, got ${records.length}`)
  assert.ok(records.filter((record) => record.msg === 'incoming request').length >= requestCount, 'every request was logged')
  for (const line of logs.lines) {
    const text = recoverableText(line)
    for (const secret of secrets) assert.ok(!text.includes(secret), `a key reached the log: ${line}`)
  }
}

describe('a key never reaches a log line', () => {
  test('When a store key, an unknown key and a PETSTORE_API_KEYS key are sent in headers, queries and failing requests, then no log line holds any of them', async (t) => {
    const logs = captureLogs()
    const envKey = `env-${generateApiKey()}`
    const api = await buildTestApp(t, { logStream: logs.stream, env: { PETSTORE_API_KEYS: envKey } })
    const unknownKey = generateApiKey()
    const requests = [...requestsCarrying(api.key), ...requestsCarrying(envKey), ...requestsCarrying(unknownKey)]

    const statuses = await send(api, requests)

    // the battery covers successes and every kind of failure
    for (const status of [200, 201, 400, 401, 404, 405, 415, 429]) assert.ok(statuses.includes(status), `no ${status} among ${statuses.join(' ')}`)
    assertNoSecretLogged(logs, requests.length, [api.key, envKey, unknownKey])
    // the redaction is visible where a key was in the URL
    assert.ok(logs.lines.some((line) => line.includes('access_token=[redacted]')))
  })

  test('When the per-key limit (RATE_LIMIT_MAX=1) turns requests away with 429, then no log line holds the key', async (t) => {
    const logs = captureLogs()
    const api = await buildTestApp(t, { logStream: logs.stream, env: { RATE_LIMIT_MAX: '1' } })
    const requests = requestsCarrying(api.key)

    const statuses = await send(api, requests)

    assert.ok(statuses.filter((status) => status === 429).length >= 5, `expected 429s, got ${statuses.join(' ')}`)
    assertNoSecretLogged(logs, requests.length, [api.key])
  })

  test('When an address is blocked after failed authentications (AUTH_FAILURE_LIMIT=2), then no log line holds the keys it tried', async (t) => {
    const logs = captureLogs()
    const api = await buildTestApp(t, { logStream: logs.stream, env: { AUTH_FAILURE_LIMIT: '2' } })
    const guesses = Array.from({ length: 6 }, () => generateApiKey())

    const statuses = await send(api, [...guesses.map((guess) => ({ method: 'GET' as const, url: '/v1/pets', headers: { authorization: `Bearer ${guess}` } })),
      { method: 'GET', url: '/v1/pets', headers: api.auth }])

    assert.deepEqual(statuses.slice(0, 2), [401, 401])
    // failing keys are refused; the valid key is served
    assert.ok(statuses.slice(2, -1).every((status) => status === 429), statuses.join(' '))
    assert.equal(statuses.at(-1), 200)
    assertNoSecretLogged(logs, statuses.length, [...guesses, api.key])
  })

  test('When Node rejects a malformed request that carried a key, then the key cannot be read from the log', async (t) => {
    const logs = captureLogs()
    const api = await buildTestApp(t, { logStream: logs.stream })
    await api.app.listen({ port: 0, host: '127.0.0.1' })
    const address = api.app.server.address()
    assert.ok(address !== null && typeof address === 'object')

    const answer = await new Promise<string>((resolve, reject) => {
      let received = ''
      const socket = connect(address.port, '127.0.0.1', () => {
        socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${api.key}\r\nBad Header: x\r\n\r\n`)
      })
      socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
      socket.once('close', () => { resolve(received) })
      socket.once('error', reject)
    })

    assert.match(answer, /^HTTP\/1\.1 400 /)
    assert.ok(logs.lines.some((line) => line.includes('client error')), 'the rejection is logged')
    for (const line of logs.lines) assert.ok(!recoverableText(line).includes(api.key), `the key can be read from: ${line.slice(0, 300)}…`)
  })
})

// pino's numeric levels
const INFO = 30
const WARN = 40
const ERROR = 50

/** The parsed lines about the request whose X-Request-Id was `id`. */
function linesOf (logs: CapturedLogs, id: string): LogRecord[] {
  return logs.records().filter((record) => record.reqId === id)
}

// what an access line holds, in the order it is written (JSON.parse keeps it): pino's own fields and the
// request id, then the request's summary, then (on the lines of requests a key authenticated) the key's
// name and role, never the key; the message last, where pino writes it
const PINO_FIELDS = ['level', 'time', 'pid', 'hostname', 'reqId']
const REQUEST_FIELDS = ['method', 'url', 'remoteAddress', 'statusCode', 'responseTime']
const KEY_FIELDS = ['keyName', 'keyRole']

/** The keys of an access line, in order; an errored line carries the error just before the message. */
function accessLineKeys (authenticated: boolean, errored = false): string[] {
  return [...PINO_FIELDS, ...REQUEST_FIELDS, ...(authenticated ? KEY_FIELDS : []), ...(errored ? ['err'] : []), 'msg']
}

for (const store of testStores()) {
  describe(`one access-log line per request (${store})`, () => {
    test('When LOG_LEVEL is info, then each request writes exactly one "request completed" line, with method, redacted URL, address, status, time, id and the key\'s name and role in that order, and no "incoming request" line', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })
      const json = { 'content-type': 'application/json' }
      // each case: the request, and the URL its line must show
      const cases: Array<[InjectOptions, string]> = [
        [{ method: 'GET', url: '/v1/pets?limit=5', headers: api.auth }, '/v1/pets?limit=5'],
        [{ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) }, '/v1/pets'],
        [{ method: 'GET', url: '/v1/pets?api_key=secret&limit=2', headers: api.auth }, '/v1/pets?api_key=[redacted]&limit=2'],
        [{ method: 'GET', url: '/v1/pets?limit=0', headers: api.auth }, '/v1/pets?limit=0'],
        [{ method: 'GET', url: '/v1/pets/999', headers: api.auth }, '/v1/pets/999'],
        [{ method: 'GET', url: '/v1/pets' }, '/v1/pets'],
        [{ method: 'DELETE', url: '/v1/pets', headers: api.auth }, '/v1/pets'],
        [{ method: 'GET', url: '/healthz' }, '/healthz']
      ]

      const answers = []
      for (const [i, [request]] of cases.entries()) {
        answers.push(await api.app.inject({ ...request, headers: { ...request.headers, 'x-request-id': `access-${i}` } }))
      }

      assert.deepEqual(answers.map((res) => res.statusCode), [200, 201, 400, 400, 404, 401, 405, 200])
      assert.deepEqual(logs.records().filter((record) => record.msg === 'incoming request'), [])
      for (const [i, [request, url]] of cases.entries()) {
        const lines = linesOf(logs, `access-${i}`)
        const completed = lines.filter((line) => line.msg === 'request completed')
        assert.equal(completed.length, 1, `one completed line for ${request.method} ${url}: ${JSON.stringify(lines)}`)
        const line = completed[0] as LogRecord
        const authenticated: boolean = url.startsWith('/v1') && answers[i]?.statusCode !== 401
        // the fields in the order the line was written: one template, one fixed order (logging.ts)
        assert.deepEqual(Object.keys(line), accessLineKeys(authenticated), `${request.method} ${url}`)
        if (authenticated) assert.deepEqual({ keyName: line.keyName, keyRole: line.keyRole }, { keyName: 'test', keyRole: 'write' })
        assert.deepEqual({ level: line.level, method: line.method, url: line.url, remoteAddress: line.remoteAddress, statusCode: line.statusCode },
          { level: 30, method: request.method, url, remoteAddress: '127.0.0.1', statusCode: answers[i]?.statusCode })
        assert.ok(typeof line.responseTime === 'number' && line.responseTime >= 0, `responseTime ${String(line.responseTime)}`)
        // an answer that went well is told in that one line alone
        if ((answers[i]?.statusCode ?? 0) < 400) assert.equal(lines.length, 1, JSON.stringify(lines))
      }
    })

    test('When LOG_LEVEL is debug, then each request writes its "incoming request" line, then its one "request completed" line', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'debug' } })

      for (const id of ['debug-1', 'debug-2']) await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': id } })

      for (const id of ['debug-1', 'debug-2']) {
        const messages = linesOf(logs, id).map((line) => line.msg).filter((msg) => msg === 'incoming request' || msg === 'request completed')
        assert.deepEqual(messages, ['incoming request', 'request completed'], id)
      }
    })

    test('When the URL carries ?api_key=secret, then the access line (and at debug the incoming line) shows it redacted', async (t) => {
      for (const level of ['info', 'debug']) {
        const logs = captureLogs()
        const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: level } })

        await api.app.inject({ method: 'GET', url: '/v1/pets?api_key=secret&limit=1', headers: { ...api.auth, 'x-request-id': 'redact-1' } })

        const lines = linesOf(logs, 'redact-1')
        const completed = lines.find((line) => line.msg === 'request completed')
        assert.equal(completed?.url, '/v1/pets?api_key=[redacted]&limit=1', level)
        if (level === 'debug') {
          const incoming = lines.find((line) => line.msg === 'incoming request')
          assert.equal((incoming?.req as { url?: unknown } | undefined)?.url, '/v1/pets?api_key=[redacted]&limit=1')
        }
        assert.ok(logs.lines.every((line) => !line.includes('secret')), level)
      }
    })

    test('When LOG_LEVEL is info and a request fails because the store is unavailable, then the failure is still logged beside its access line', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })
      await api.app.database.close()

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': 'down-1' } })

      assertError(res, 'service_unavailable')
      const lines = linesOf(logs, 'down-1')
      assert.deepEqual(lines.map((line) => [line.level, line.msg]), [[40, 'request failed: the store is unavailable'], [30, 'request completed']])
      assert.equal(lines[1]?.statusCode, 503)
      // the key could not be looked up: the line carries no key fields
      assert.deepEqual(Object.keys(lines[1] ?? {}), accessLineKeys(false))
    })

    test('When a hook fails after the answer went out, then the request\'s one line is "request errored" at error, with the access line\'s fields in the same order and the error before the message', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })
      // an onResponse hook that fails: Fastify hands its error to the log controller with the request
      api.app.addHook('onResponse', (_request, _reply, done) => { done(new Error('a hook failed after the answer')) })
      // each case: the URL, the headers, and whether a key authenticated the request
      const cases: Array<[string, Record<string, string>, boolean]> = [
        ['/v1/pets?limit=1', api.auth, true],
        ['/v1/pets', {}, false],
        ['/healthz', {}, false]
      ]

      const answers = []
      for (const [i, [url, headers]] of cases.entries()) {
        answers.push(await api.app.inject({ method: 'GET', url, headers: { ...headers, 'x-request-id': `errored-${i}` } }))
      }

      assert.deepEqual(answers.map((res) => res.statusCode), [200, 401, 200])
      for (const [i, [url, , authenticated]] of cases.entries()) {
        const lines = linesOf(logs, `errored-${i}`).filter((line) => line.msg === 'request errored' || line.msg === 'request completed')
        assert.equal(lines.length, 1, `one line for ${url}: ${JSON.stringify(lines)}`)
        const line = lines[0] as LogRecord
        assert.deepEqual(Object.keys(line), accessLineKeys(authenticated, true), `${url}, ${authenticated ? 'with' : 'without'} a key`)
        assert.deepEqual({ level: line.level, msg: line.msg, method: line.method, url: line.url, statusCode: line.statusCode, error: (line.err as { message?: unknown } | undefined)?.message },
          { level: ERROR, msg: 'request errored', method: 'GET', url, statusCode: answers[i]?.statusCode, error: 'a hook failed after the answer' })
        if (authenticated) assert.deepEqual({ keyName: line.keyName, keyRole: line.keyRole }, { keyName: 'test', keyRole: 'write' })
      }
    })
  })
}

for (const store of testStores()) {
  describe(`log levels of refused requests (${store})`, () => {
    // answers any key holder (or anyone) can provoke at will: none may reach the error log or carry a stack
    const provoked: Array<[string, InjectOptions, number]> = [
      ['422 for an order of a pet that does not exist', { method: 'POST', url: '/v1/store/orders', headers: { 'content-type': 'application/json' }, payload: '{"petId":999}' }, 422],
      ['400 for an invalid limit', { method: 'GET', url: '/v1/pets?limit=0' }, 400],
      ['400 for an unknown query parameter', { method: 'GET', url: '/v1/pets?status[]=sold' }, 400],
      ['404 for an unknown pet', { method: 'GET', url: '/v1/pets/999' }, 404],
      ['404 for an unknown path', { method: 'GET', url: '/v1/nothing' }, 404],
      ['405 for a method the path does not have', { method: 'DELETE', url: '/v1/pets' }, 405],
      ['415 for a body that is not JSON', { method: 'POST', url: '/v1/pets', headers: { 'content-type': 'text/plain' }, payload: 'Rex' }, 415],
      ['400 for malformed JSON', { method: 'POST', url: '/v1/pets', headers: { 'content-type': 'application/json' }, payload: '{"name":' }, 400]
    ]
    for (const [what, request, status] of provoked) {
      test(`When a request gets ${what}, then it is logged at info without a stack, never at error`, async (t) => {
        const logs = captureLogs()
        const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })
        const id = `provoked-${status}`

        const res = await api.app.inject({ ...request, headers: { ...api.auth, ...request.headers, 'x-request-id': id } })

        assert.equal(res.statusCode, status, res.body)
        const lines = linesOf(logs, id)
        assert.deepEqual(lines.map((line) => [line.level, line.msg]), [[INFO, 'request rejected'], [INFO, 'request completed']])
        assert.ok(lines.every((line) => line.err === undefined && !JSON.stringify(line).includes('    at ')), 'no stack')
      })
    }

    test('When a key fails, then the 401 is logged at info without a stack', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })

      await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer petstore_unknown', 'x-request-id': 'bad-key' } })

      assert.ok(linesOf(logs, 'bad-key').every((line) => Number(line.level) < WARN && line.err === undefined))
    })

    test('When the store is unreachable, then the 503 is a warn (the database\'s state, not a fault of ours) and nothing is at error', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info' } })
      await api.app.database.close()

      await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, 'x-request-id': 'store-down' } })

      const levels = linesOf(logs, 'store-down').map((line) => Number(line.level))
      assert.ok(levels.includes(WARN))
      assert.ok(levels.every((level) => level < ERROR))
    })
  })
}

describe('redactUrl', () => {
  test('When the URL has no query, then it is returned unchanged', () => {
    assert.equal(redactUrl('/v1/pets'), '/v1/pets')
    assert.equal(redactUrl('/v1/pets/12'), '/v1/pets/12')
  })

  test('When a parameter may hold a key, then its value is replaced and everything else is kept in order', () => {
    assert.equal(redactUrl('/v1/pets?access_token=secret'), '/v1/pets?access_token=[redacted]')
    assert.equal(redactUrl('/v1/pets?token=secret&limit=5'), '/v1/pets?token=[redacted]&limit=5')
    assert.equal(redactUrl('/v1/pets?limit=5&api_key=secret&status=sold'), '/v1/pets?limit=5&api_key=[redacted]&status=sold')
  })

  test('When the parameter is any of the names a key may hide in, whatever the case, then its value is redacted', () => {
    for (const name of ['access_token', 'api_key', 'apikey', 'apiKey', 'API_KEY', 'key', 'token', 'Token', 'auth', 'authorization', 'bearer', 'Access_Token']) {
      assert.equal(redactUrl(`/v1/pets?${name}=secret`), `/v1/pets?${name}=[redacted]`, name)
    }
  })

  test('When the name is percent-encoded, then it is recognised decoded and kept as sent', () => {
    assert.equal(redactUrl('/v1/pets?access%5Ftoken=secret'), '/v1/pets?access%5Ftoken=[redacted]')
    assert.equal(redactUrl('/v1/pets?%74oken=secret&limit=1'), '/v1/pets?%74oken=[redacted]&limit=1')
  })

  test('When a secret parameter repeats or is empty, then each value is redacted', () => {
    assert.equal(redactUrl('/v1/pets?token=a&token=b'), '/v1/pets?token=[redacted]&token=[redacted]')
    assert.equal(redactUrl('/v1/pets?token='), '/v1/pets?token=[redacted]')
  })

  test('When a name only contains a secret word, or has no value, then it is kept', () => {
    assert.equal(redactUrl('/v1/pets?tokens=1&monkey=2&keyring=3&token'), '/v1/pets?tokens=1&monkey=2&keyring=3&token')
    assert.equal(redactUrl('/v1/pets?'), '/v1/pets?')
  })

  test('When a name is not valid percent-encoding, then the URL is returned without throwing', () => {
    assert.equal(redactUrl('/v1/pets?%E0%A4%A=1&token=secret'), '/v1/pets?%E0%A4%A=1&token=[redacted]')
  })

  test('When the value holds "=" or encoded characters, then the whole value is redacted', () => {
    assert.equal(redactUrl('/v1/pets?token=a=b%3Dc&limit=2'), '/v1/pets?token=[redacted]&limit=2')
  })

  test('When a key is sent as api-key or x-api-key, then its value is redacted too', () => {
    assert.equal(redactUrl('/v1/pets?api-key=secret'), '/v1/pets?api-key=[redacted]')
    assert.equal(redactUrl('/v1/pets?x-api-key=secret'), '/v1/pets?x-api-key=[redacted]')
  })

  test('When an issued key appears anywhere in the URL, then it is redacted', () => {
    const key = `petstore_${'A'.repeat(43)}`
    assert.equal(redactUrl(`/v1/pets?${key}`), '/v1/pets?[redacted]')
    assert.equal(redactUrl(`/v1/pets/${key}?limit=1`), '/v1/pets/[redacted]?limit=1')
  })
})
