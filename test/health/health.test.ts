import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, testStores } from '../helpers/build-app.js'

for (const store of testStores()) {
  describe(`health probes (${store})`, () => {
    test('When the process is up, then /healthz answers 200 without a key', async (t) => {
      const { app } = await buildTestApp(t, { store })
      const res = await app.inject({ method: 'GET', url: '/healthz' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { status: 'ok' })
    })

    test('When the store answers, then /readyz answers 200 without a key', async (t) => {
      const { app } = await buildTestApp(t, { store })
      const res = await app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { status: 'ready' })
    })

    test('When the store is gone, then /readyz and the API answer 503 Error bodies', async (t) => {
      const test = await buildTestApp(t, { store })
      await test.app.ready()
      await test.app.database.close()

      const ready = await test.app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(ready.statusCode, 503)
      assert.deepEqual(ready.json(), { code: 'service_unavailable', message: 'The store is not reachable.', status: 503 })

      const list = await test.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer anything' } })
      assert.equal(list.statusCode, 503)
      assert.equal(list.json().code, 'service_unavailable')
    })
  })
}
