import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, postPet, testStores } from '../../helpers/build-app.js'

for (const store of testStores()) {
  describe(`trailing slashes (${store})`, () => {
    for (const [method, url] of [['GET', '/v1/pets/'], ['POST', '/v1/pets/'], ['DELETE', '/v1/pets/'], ['GET', '/v1/pets/1/'], ['GET', '/v1/store/orders/'], ['GET', '/v1/pets//'], ['GET', '/v1/pets/?limit=2']] as const) {
      test(`When ${method} ${url} is asked, then it is 404 not_found like any unknown path, never an operation's answer`, async (t) => {
        const api = await buildTestApp(t, { store })
        await postPet(api, { name: 'Rex', categoryId: 1 })

        const res = await api.app.inject({ method, url, headers: { ...api.auth, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{"name":"Rex","categoryId":1}' } : {}) })

        assertError(res, 'not_found', 'no path ends in "/"')
        // not routed to the deprecated getPet: none of its marks
        assert.equal(res.headers.deprecation, undefined)
        assert.equal(res.headers.sunset, undefined)
        assert.equal(res.headers.allow, undefined)
      })
    }

    test('When /v1/pets/ is asked without a key, then it is 401: authentication comes first, as for any path under /v1', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets/' })

      assertError(res, 'unauthorized')
      assert.equal(res.headers.deprecation, undefined)
    })

    test('When the probes and documents are asked with a trailing slash, then they are 404 too', async (t) => {
      const api = await buildTestApp(t, { store })

      for (const url of ['/healthz/', '/readyz/', '/v1/openapi.json/']) {
        assertError(await api.app.inject({ method: 'GET', url, headers: api.auth }), 'not_found', 'no path ends in "/"')
      }
    })

    test('When the deprecated-call metric is read after /v1/pets/, then getPet was not counted', async (t) => {
      const api = await buildTestApp(t, { store })

      await api.app.inject({ method: 'GET', url: '/v1/pets/', headers: api.auth })

      assert.doesNotMatch(await api.app.metrics.registry.metrics(), /petstore_deprecated_operation_calls_total\{[^}]*operation="getPet"[^}]*\} [1-9]/)
    })
  })
}
