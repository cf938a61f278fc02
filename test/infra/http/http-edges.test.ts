import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, listAllPets, testStores, type TestApp } from '../../helpers/build-app.js'
import { parseRawAnswer, rawExchange } from '../../helpers/raw-http.js'

/** The app, listening on a free port of 127.0.0.1. */
async function listening (api: TestApp): Promise<number> {
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  return (api.app.server.address() as { port: number }).port
}

const REX = '{"name":"Rex","categoryId":1}'

for (const store of testStores()) {
  describe(`HTTP edges (${store})`, () => {
    test('When an HTTP/1.1 request has no Host header, then 400 names Host in an Error body with X-Request-Id', async (t) => {
      const api = await buildTestApp(t, { store })
      const port = await listening(api)

      const answer = parseRawAnswer(await rawExchange(port, `GET /v1/pets HTTP/1.1\r\nAuthorization: Bearer ${api.key}\r\nConnection: close\r\n\r\n`))

      assert.equal(answer.status, 400)
      assert.deepEqual(answer.body, { code: 'invalid_request', message: 'header "Host" is required in an HTTP/1.1 request (RFC 9112 §3.2)', status: 400 })
      assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/)
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/)
    })

    test('When an HTTP/1.0 request has no Host header, then it is served: Host is HTTP/1.1\'s requirement', async (t) => {
      const api = await buildTestApp(t, { store })
      const port = await listening(api)

      const answer = parseRawAnswer(await rawExchange(port, `GET /v1/pets HTTP/1.0\r\nAuthorization: Bearer ${api.key}\r\n\r\n`))

      assert.equal(answer.status, 200)
      assert.deepEqual(answer.body, [])
    })

    test('When a request has two Host headers, then 400 says Host must be sent once, before authentication, and nothing is created', async (t) => {
      const api = await buildTestApp(t, { store })
      const port = await listening(api)

      const answer = parseRawAnswer(await rawExchange(port, 'POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n' +
        `Authorization: Bearer ${api.key}\r\nContent-Type: application/json\r\nContent-Length: ${REX.length}\r\nConnection: close\r\n\r\n${REX}`))

      assert.equal(answer.status, 400)
      assert.deepEqual(answer.body, { code: 'invalid_request', message: 'header "Host" must be sent once (RFC 9112 §3.2)', status: 400 })
      assert.ok(answer.headers['x-request-id'] !== undefined)
      assert.deepEqual(await listAllPets(api), [])
    })

    for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'SEARCH', 'REPORT']) {
      test(`When ${method}, a method the server does not implement at all, is sent to an existing path, then 501 not_implemented names it`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await api.app.inject({ method: method as 'GET', url: '/v1/pets', headers: api.auth })

        assertError(res, 'not_implemented', `The method ${method} is not implemented by this server`)
        assert.equal(res.headers.allow, undefined)
      })
    }

    test('When PROPFIND comes without a key, then 401: authentication comes first under /v1; outside it, 501 at once', async (t) => {
      const api = await buildTestApp(t, { store })

      assertError(await api.app.inject({ method: 'PROPFIND' as 'GET', url: '/v1/pets' }), 'unauthorized')
      assertError(await api.app.inject({ method: 'PROPFIND' as 'GET', url: '/healthz' }), 'not_implemented')
    })

    test('When a method the server recognizes is not one of the path\'s, then 405 with Allow, as before', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'PUT', url: '/v1/pets', headers: api.auth })

      assertError(res, 'method_not_allowed')
      assert.equal(res.headers.allow, 'GET, POST, HEAD')
    })

    for (const encoding of ['gzip', 'br', 'deflate', 'GZIP', 'gzip, identity']) {
      test(`When a create's body has Content-Encoding: ${encoding}, then 415 with Accept-Encoding: identity, and nothing is created`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json', 'content-encoding': encoding }, payload: REX })

        assertError(res, 'unsupported_media_type', 'Content-Encoding')
        assert.equal(res.headers['accept-encoding'], 'identity')
        assert.deepEqual(await listAllPets(api), [])
      })
    }

    test('When a create\'s body says Content-Encoding: identity, then it is read as it is', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json', 'content-encoding': 'identity' }, payload: REX })

      assert.equal(res.statusCode, 201)
    })

    test('When a gzip-encoded body comes without a key, then 401: authentication comes first', async (t) => {
      const api = await buildTestApp(t, { store })

      assertError(await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: REX }), 'unauthorized')
    })

    test('When Node rejects a request before Fastify sees it, then its raw Error answer carries an X-Request-Id too', async (t) => {
      const api = await buildTestApp(t, { store })
      const port = await listening(api)

      const answer = parseRawAnswer(await rawExchange(port, 'GARBAGE\r\n\r\n'))

      assert.equal(answer.status, 400)
      assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/)
    })
  })
}
