import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startService } from '../helpers/client-service.js'

for (const store of testStores()) {
  describe(`@petstore/client and int64 values beyond 2^53 (${store})`, () => {
    test('When a category id is a bigint, then it is sent digit for digit and every answer hands it back as that bigint', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service, { retries: 0 })

      const created = await client.createPet({ name: 'Rex', categoryId: 2n ** 63n - 1n })
      const fetched = await client.getPet(created.id)
      const { pets } = await client.listPets()
      const { pet: updated } = await client.updatePet(BigInt(created.id), { categoryId: -(2n ** 63n) })
      const { events } = await client.listEvents()

      assert.equal(created.categoryId, 2n ** 63n - 1n)
      assert.equal(typeof created.id, 'number', 'an ordinary id stays a number')
      assert.deepEqual(fetched, created)
      assert.deepEqual(pets, [created])
      assert.deepEqual(updated, { ...created, categoryId: -(2n ** 63n) })
      assert.deepEqual(events.map((event) => 'pet' in event.data ? event.data.pet.categoryId : undefined), [2n ** 63n - 1n, -(2n ** 63n)])
      assert.deepEqual(events[1]?.type === 'pet.updated' ? events[1].data.previous : undefined, { categoryId: 2n ** 63n - 1n })
      const small = await client.createPet({ name: 'Max', categoryId: 9007199254740991 })
      assert.equal(small.categoryId, Number.MAX_SAFE_INTEGER, 'a safe integer stays a number')
    })

    test('When a pet id is an int64 no pet has, then getPet and updatePet fail with pet_not_found; a category beyond int64 is invalid_request', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service, { retries: 0 })

      const notFound = await petStoreError(async () => await client.getPet(2n ** 63n - 1n))
      const notFoundPatch = await petStoreError(async () => await client.updatePet(2n ** 53n + 1n, { name: 'Max' }))
      const tooLarge = await petStoreError(async () => await client.createPet({ name: 'Rex', categoryId: 2n ** 63n }))

      assert.deepEqual([notFound.code, notFound.status, notFound.message], ['pet_not_found', 404, 'No pet has id 9223372036854775807.'])
      assert.deepEqual([notFoundPatch.code, notFoundPatch.message], ['pet_not_found', 'No pet has id 9007199254740993.'])
      assert.deepEqual([tooLarge.code, tooLarge.message], ['invalid_request', 'body: field "categoryId" must be <= 9223372036854775807'])
    })
  })
}
