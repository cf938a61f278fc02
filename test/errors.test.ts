import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ERRORS, toApiError } from '../src/errors.js'
import { buildTestApp, testStores } from './helpers/build-app.js'
import { assertError } from './helpers/assertions.js'

for (const store of testStores()) {
  describe(`error answers (${store})`, () => {
    test('When a path outside the API is unknown, then 404 not_found in the Error shape', async (t) => {
      const { app } = await buildTestApp(t)

      const res = await app.inject({ method: 'GET', url: '/nowhere?x=1' })

      assertError(res, 'not_found', '/nowhere')
    })

    test('When a path under /v1 is unknown and the key is valid, then 404 not_found', async (t) => {
      const app = await buildTestApp(t)

      const res = await app.app.inject({ method: 'GET', url: '/v1/pets/1/toys', headers: app.auth })

      assertError(res, 'not_found', '/v1/pets/1/toys')
    })

    const notAllowed: Array<[string, string, string]> = [
      ['PUT', '/v1/pets', 'GET, POST, HEAD'],
      ['DELETE', '/v1/pets', 'GET, POST, HEAD'],
      ['PATCH', '/v1/pets/1', 'GET, HEAD'],
      ['PUT', '/v1/pets/1', 'GET, HEAD'],
      ['DELETE', '/v1/pets/1', 'GET, HEAD'],
      ['POST', '/v1/pets/1', 'GET, HEAD'],
      ['POST', '/v1/store/orders', 'GET, HEAD'],
      ['OPTIONS', '/v1/pets', 'GET, POST, HEAD']
    ]
    for (const [method, url, allow] of notAllowed) {
      test(`When ${method} ${url} is called, then 405 with Allow: ${allow}`, async (t) => {
        const app = await buildTestApp(t)
        await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload: '{"name":"Rex","categoryId":1}' })

        const res = await app.app.inject({ method: method as 'PUT', url, headers: { ...app.auth, 'content-type': 'application/json' }, payload: '{"name":"Max","categoryId":2}' })

        assertError(res, 'method_not_allowed', method)
        assert.equal(res.headers.allow, allow)
        const pets = (await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })).json()
        assert.deepEqual(pets.map((pet: { name: string }) => pet.name), ['Rex'])
      })
    }

    test('When a handler fails unexpectedly, then 500 internal_error without internals', async (t) => {
      const { app } = await buildTestApp(t)
      app.get('/explode', async () => { throw new Error('SQLITE_CORRUPT at /var/lib/secret/path.db: select * from pets') })

      const res = await app.inject({ method: 'GET', url: '/explode' })

      const body = assertError(res, 'internal_error')
      assert.equal(body.message, ERRORS.internal_error.message)
      assert.doesNotMatch(res.body, /SQLITE|secret|select|at \//)
    })

    test('When the URL cannot be decoded, then 400 invalid_request', async (t) => {
      const app = await buildTestApp(t)

      const res = await app.app.inject({ method: 'GET', url: '/v1/pets/%zz', headers: app.auth })

      assertError(res, 'invalid_request', 'URL')
    })
  })
}

describe('toApiError', () => {
  test('When a failure is unknown, then it maps to internal_error with the catalogue message', () => {
    const error = toApiError(new TypeError('boom'))
    assert.deepEqual(error.toBody(), { code: 'internal_error', message: ERRORS.internal_error.message, status: 500 })
  })

  test('When every catalogue entry is listed, then codes are snake_case and statuses are errors', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      assert.match(code, /^[a-z]+(_[a-z]+)*$/)
      assert.ok(entry.status >= 400 && entry.status <= 599)
    }
  })
})
