import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Category, CategoryUpdatedEvent } from '@petstore/client'
import { testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startService } from '../helpers/client-service.js'

for (const store of testStores()) {
  describe(`@petstore/client categories against the live service (${store})`, () => {
    test('When categories are named and listed through the client, then it answers them typed, exactly, with the ETag the service sends', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const huge = 2n ** 63n - 1n
      await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Moby', categoryId: huge, status: 'sold' })

      const named = await client.categories.put(1, 'Dogs')
      const renamed = await client.categories.put(1, 'Hounds')
      const fetched = await client.categories.get(huge)
      const page = await client.categories.list({ limit: 1 })
      const every: Category[] = []
      for await (const category of client.categories.all()) every.push(category)

      assert.equal(named.created, true)
      assert.equal(renamed.created, false)
      assert.deepEqual(renamed.category, { id: 1, name: 'Hounds', pets: { available: 1, pending: 0, sold: 0 } })
      assert.deepEqual(fetched.category, { id: huge, name: null, pets: { available: 0, pending: 0, sold: 1 } })
      const read = await service.app.inject({ method: 'GET', url: '/v1/categories/1', headers: service.auth })
      assert.equal(renamed.etag, read.headers.etag)
      assert.equal(page.categories.length, 1)
      assert.equal(typeof page.nextCursor, 'string')
      assert.deepEqual(every.map(({ id, name }) => [id, name]), [[1, 'Hounds'], [huge, null]])
      const { events } = await client.listEvents({ type: 'category.updated' })
      assert.deepEqual(events.map((event) => (event as CategoryUpdatedEvent).data.previous), [{ name: null }, { name: 'Dogs' }])
    })

    test('When a category is unknown or its name is taken, then the client throws the service\'s code', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      await client.categories.put(1, 'Dogs')

      const unknown = await petStoreError(async () => await client.categories.get(2))
      const taken = await petStoreError(async () => await client.categories.put(2, 'Dogs'))

      assert.deepEqual([unknown.code, unknown.status, unknown.operation], ['category_not_found', 404, 'getCategory'])
      assert.deepEqual([taken.code, taken.status, taken.operation], ['category_name_taken', 409, 'putCategory'])
    })
  })
}
