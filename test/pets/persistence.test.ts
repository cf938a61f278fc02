import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, postPet, testStores } from '../helpers/build-app.js'

for (const store of testStores()) {
  describe(`persistence (${store})`, () => {
    test('When the app is stopped and started again on the same database, then every pet and key is still there', async (t) => {
      const first = await buildTestApp(t, { store })
      const created = []
      for (let i = 0; i < 30; i++) created.push((await postPet(first, { name: `pet ${i}`, categoryId: i, status: i % 2 === 0 ? 'sold' : 'pending' })).json())
      await first.app.close()

      const second = await buildTestApp(t, { databaseUrl: first.databaseUrl, withKey: false })
      const res = await second.app.inject({ method: 'GET', url: '/v1/pets?limit=100', headers: first.auth })

      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), created)
      const one = await second.app.inject({ method: 'GET', url: `/v1/pets/${created[7].id}`, headers: first.auth })
      assert.deepEqual(one.json(), created[7])
    })
  })
}
