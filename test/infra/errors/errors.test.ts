import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ApiError, ERRORS, StoreUnavailableError } from '../../../src/infra/errors/catalogue.js'
import { errorBody, toApiError } from '../../../src/infra/http/error-handler.js'
import { buildTestApp, testStores } from '../../helpers/build-app.js'
import { assertError } from '../../helpers/assertions.js'
import { rawExchange } from '../../helpers/raw-http.js'

for (const store of testStores()) {
  describe(`error answers (${store})`, () => {
    test('When a path outside the API is unknown, then 404 not_found in the Error shape', async (t) => {
      const { app } = await buildTestApp(t, { store })

      const res = await app.inject({ method: 'GET', url: '/nowhere?x=1' })

      assertError(res, 'not_found', '/nowhere')
    })

    test('When a path under /v1 is unknown and the key is valid, then 404 not_found', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await app.app.inject({ method: 'GET', url: '/v1/pets/1/toys', headers: app.auth })

      assertError(res, 'not_found', '/v1/pets/1/toys')
    })

    const notAllowed: Array<[string, string, string]> = [
      ['PUT', '/v1/pets', 'GET, POST, HEAD'],
      ['DELETE', '/v1/pets', 'GET, POST, HEAD'],
      ['PATCH', '/v1/pets', 'GET, POST, HEAD'],
      ['PUT', '/v1/pets/1', 'GET, PATCH, HEAD'],
      ['DELETE', '/v1/pets/1', 'GET, PATCH, HEAD'],
      ['POST', '/v1/pets/1', 'GET, PATCH, HEAD'],
      ['DELETE', '/v1/store/orders', 'GET, POST, HEAD'],
      ['POST', '/v1/store/inventory', 'GET, HEAD'],
      ['OPTIONS', '/v1/pets', 'GET, POST, HEAD'],
      ['TRACE', '/v1/pets', 'GET, POST, HEAD'],
      ['QUERY', '/v1/pets/1', 'GET, PATCH, HEAD']
    ]
    for (const [method, url, allow] of notAllowed) {
      test(`When ${method} ${url} is called, then 405 with Allow: ${allow}`, async (t) => {
        const app = await buildTestApp(t, { store })
        await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload: '{"name":"Rex","categoryId":1}' })

        const res = await app.app.inject({ method: method as 'PUT', url, headers: { ...app.auth, 'content-type': 'application/json' }, payload: '{"name":"Max","categoryId":2}' })

        assertError(res, 'method_not_allowed', method)
        assert.equal(res.headers.allow, allow)
        const pets = (await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })).json()
        assert.deepEqual(pets.map((pet: { name: string }) => pet.name), ['Rex'])
      })
    }

    for (const url of ['/healthz', '/readyz', '/v1/openapi.json', '/v1/openapi.yaml', '/v1/asyncapi.json', '/v1/asyncapi.yaml']) {
      test(`When POST ${url} is called without a key, then 405 (the route is public)`, async (t) => {
        const { app } = await buildTestApp(t, { store })

        const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' })

        assertError(res, 'method_not_allowed')
        assert.equal(res.headers.allow, 'GET, HEAD')
      })
    }

    test('When a method is not allowed, then 405 comes before the body is read', async (t) => {
      const app = await buildTestApp(t, { store })

      for (const [contentType, payload] of [['text/plain', 'hello'], ['application/json', '{bad'], ['application/json', 'x'.repeat(20_000)]]) {
        const res = await app.app.inject({ method: 'PUT', url: '/v1/pets/1', headers: { ...app.auth, 'content-type': contentType as string }, payload })
        assertError(res, 'method_not_allowed')
      }
    })

    test('When a request is not valid HTTP, then the raw answer is still an Error body', async (t) => {
      const { app } = await buildTestApp(t, { store })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.server.address() as { port: number }

      const garbled = await rawExchange(port, 'GARBAGE\r\n\r\n')
      const conflicting = await rawExchange(port, 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
      const oversized = await rawExchange(port, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)

      assert.match(garbled, /^HTTP\/1\.1 400 /)
      assert.match(conflicting, /^HTTP\/1\.1 400 /)
      assert.match(oversized, /^HTTP\/1\.1 431 /)
      for (const [answer, code, status] of [[garbled, 'invalid_request', 400], [conflicting, 'invalid_request', 400], [oversized, 'headers_too_large', 431]] as const) {
        assert.match(answer, /content-type: application\/json/i)
        assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code, code)
        assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).status, status)
      }
    })

    test('When a handler fails unexpectedly, then 500 internal_error without internals', async (t) => {
      const { app } = await buildTestApp(t, { store })
      app.get('/explode', async () => { throw new Error('SQLITE_CORRUPT at /var/lib/secret/path.db: select * from pets') })

      const res = await app.inject({ method: 'GET', url: '/explode' })

      const body = assertError(res, 'internal_error')
      assert.equal(body.message, ERRORS.internal_error.message)
      assert.doesNotMatch(res.body, /SQLITE|secret|select|at \//)
    })

    test('When the URL cannot be decoded, then 400 invalid_request', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await app.app.inject({ method: 'GET', url: '/v1/pets/%zz', headers: app.auth })

      assertError(res, 'invalid_request', 'URL')
    })
  })
}

describe('toApiError', () => {
  test('When a failure is a 503, then it carries Retry-After: 1 besides its own headers; other statuses do not', () => {
    assert.deepEqual(toApiError(new StoreUnavailableError('down')).headers, { 'retry-after': '1' })
    assert.deepEqual(new ApiError('service_unavailable', 'draining', { connection: 'close' }).headers, { 'retry-after': '1', connection: 'close' })
    assert.deepEqual(new ApiError('internal_error').headers, {})
  })

  test('When a failure is unknown, then it maps to internal_error with the catalogue message', () => {
    const error = toApiError(new TypeError('boom'))
    assert.deepEqual(errorBody(error), { code: 'internal_error', message: ERRORS.internal_error.message, status: 500 })
  })

  test('When every catalogue entry is listed, then codes are snake_case and statuses are errors', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      assert.match(code, /^[a-z]+(_[a-z]+)*$/)
      assert.ok(entry.status >= 400 && entry.status <= 599)
    }
  })
})
