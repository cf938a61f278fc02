import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createClient, type Pet } from '@petstore/client'
import { listAllPets, testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startService } from '../helpers/client-service.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

async function collect (pets: AsyncIterable<Pet>): Promise<Pet[]> {
  const all: Pet[] = []
  for await (const pet of pets) all.push(pet)
  return all
}

for (const store of testStores()) {
  describe(`@petstore/client against the live service (${store})`, () => {
    test('When a pet is created, then it is listed and fetched as the service stored it', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)

      const created = await client.createPet({ name: 'Rex', categoryId: 7 })
      const page = await client.listPets()
      const fetched = await client.getPet(created.id)

      assert.deepEqual(created, { id: created.id, name: 'Rex', categoryId: 7, status: 'available' })
      assert.deepEqual(page, { pets: [created] })
      assert.deepEqual(fetched, created)
      assert.deepEqual(await listAllPets(service), [created])
    })

    test('When createPet is called, then it sends a fresh Idempotency-Key unless given one', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)

      await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Rex', categoryId: 1 })
      const chosen = await client.createPet({ name: 'Bella', categoryId: 2 }, { idempotencyKey: 'order-42' })
      const repeated = await client.createPet({ name: 'Bella', categoryId: 2 }, { idempotencyKey: 'order-42' })

      const keys = service.served.filter((r) => r.method === 'POST').map((r) => r.idempotencyKey)
      assert.match(String(keys[0]), UUID)
      assert.match(String(keys[1]), UUID)
      assert.notEqual(keys[0], keys[1])
      assert.deepEqual(keys.slice(2), ['order-42', 'order-42'])
      assert.deepEqual(repeated, chosen)
      assert.equal(service.served.at(-1)?.replayed, true)
      assert.equal((await listAllPets(service)).length, 3)
    })

    test('When there are more pets than the page size, then pets.all yields every one, page after page', async (t) => {
      // the service's Link names PUBLIC_BASE_URL (port 8080 by default), not the port it listens on:
      // as behind a gateway, the client must page at its own baseUrl
      const service = await startService(t, { store })
      const client = clientOf(service)
      const created: Pet[] = []
      for (let i = 1; i <= 7; i++) created.push(await client.createPet({ name: `Pet ${i}`, categoryId: i }))

      const all = await collect(client.pets.all({ limit: 3 }))

      assert.deepEqual(all, created)
      const lists = service.served.filter((r) => r.method === 'GET')
      assert.equal(lists.length, 3)
      assert.match(String(lists[1]?.url), /[?&]cursor=/)
    })

    test('When listPets has a next page, then nextCursor leads to it, with the same filter', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      for (let i = 1; i <= 3; i++) await client.createPet({ name: `Pet ${i}`, categoryId: 1 })

      const first = await client.listPets({ limit: 2 })
      const second = await client.listPets({ limit: 2, cursor: first.nextCursor })

      assert.equal(first.pets.length, 2)
      assert.equal(typeof first.nextCursor, 'string')
      assert.deepEqual(second.pets.map((pet) => pet.name), ['Pet 3'])
      assert.equal(second.nextCursor, undefined)
    })

    test('When pets.all is given a status, then it yields only the pets with that status, across pages', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const statuses = ['available', 'sold', 'pending', 'sold', 'available', 'sold', 'sold'] as const
      const created: Pet[] = []
      for (const [i, status] of statuses.entries()) created.push(await client.createPet({ name: `Pet ${i}`, categoryId: 1, status }))

      const sold = await collect(client.pets.all({ status: 'sold', limit: 2 }))
      const pending = await client.listPets({ status: 'pending' })

      assert.deepEqual(sold, created.filter((pet) => pet.status === 'sold'))
      assert.deepEqual(pending.pets, created.filter((pet) => pet.status === 'pending'))
    })

    test('When a create is invalid, then PetStoreError carries invalid_request, 400, the field and the request id', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)

      const error = await petStoreError(() => client.createPet({ name: '', categoryId: 1 }))

      assert.equal(error.code, 'invalid_request')
      assert.equal(error.status, 400)
      assert.match(error.message, /"name"/)
      assert.equal(error.operation, 'createPet')
      assert.equal(error.attempts, 1)
      assert.equal(error.requestId, service.served.at(-1)?.requestId)
      assert.match(String(error.requestId), UUID)
      assert.deepEqual(await listAllPets(service), [])
    })

    test('When updatePet is called, then it sends a JSON Merge Patch and answers the pet as it now is, with the ETag getPet sends', async (t) => {
      const contentTypes: string[] = []
      const service = await startService(t, { store }, (app) => {
        app.addHook('onRequest', async (request) => { if (request.method === 'PATCH') contentTypes.push(String(request.headers['content-type'])) })
      })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 7 })

      const pending = await client.updatePet(rex.id, { status: 'pending' })
      const renamed = await client.updatePet(rex.id, { name: 'Rex II' })
      const unchanged = await client.updatePet(rex.id, {})

      assert.deepEqual(pending.pet, { ...rex, status: 'pending' })
      assert.deepEqual(renamed.pet, { ...rex, name: 'Rex II', status: 'pending' })
      assert.deepEqual(unchanged, renamed)
      const read = await service.app.inject({ method: 'GET', url: `/v1/pets/${rex.id}`, headers: service.auth })
      assert.equal(renamed.etag, read.headers.etag)
      assert.notEqual(pending.etag, renamed.etag)
      assert.deepEqual(contentTypes, Array(3).fill('application/merge-patch+json'))
    })

    test('When updatePet carries ifMatch, then the current tag changes the pet, and a stale one fails with precondition_failed, 412, without a retry', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 7 })
      const { etag } = await client.updatePet(rex.id, {})

      const sold = await client.updatePet(rex.id, { status: 'sold' }, { ifMatch: etag })
      const error = await petStoreError(() => client.updatePet(rex.id, { name: 'Lost update' }, { ifMatch: etag }))

      assert.deepEqual(sold.pet, { ...rex, status: 'sold' })
      assert.equal(error.code, 'precondition_failed')
      assert.equal(error.status, 412)
      assert.equal(error.operation, 'updatePet')
      assert.equal(error.attempts, 1)
      assert.deepEqual((await client.updatePet(rex.id, {})).pet, sold.pet)
    })

    test('When updatePet asks for a forbidden transition, then PetStoreError is invalid_transition, 409, naming both states, without a retry', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 7, status: 'sold' })

      const error = await petStoreError(() => client.updatePet(rex.id, { status: 'available' }))

      assert.equal(error.code, 'invalid_transition')
      assert.equal(error.status, 409)
      assert.match(error.message, /"sold".*"available"/)
      assert.equal(error.attempts, 1)
      assert.equal(service.served.filter((r) => r.method === 'PATCH').length, 1)
    })

    test('When a query parameter is out of range, then the 400 names it', async (t) => {
      const service = await startService(t, { store })

      const error = await petStoreError(() => clientOf(service).listPets({ limit: 101 }))

      assert.equal(error.code, 'invalid_request')
      assert.equal(error.status, 400)
      assert.match(error.message, /"limit"/)
    })

    test('When the API key is wrong, then PetStoreError is unauthorized, 401, and nothing is retried', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service, { apiKey: 'petstore_not-a-real-key' })

      const error = await petStoreError(() => client.listPets())

      assert.equal(error.code, 'unauthorized')
      assert.equal(error.status, 401)
      assert.equal(error.attempts, 1)
      assert.equal(error.requestId, service.served.at(-1)?.requestId)
      assert.equal(service.served.length, 1)
    })

    test('When no pet has the id, then PetStoreError is pet_not_found, 404', async (t) => {
      const service = await startService(t, { store })

      const error = await petStoreError(() => clientOf(service).getPet(999_999))

      assert.equal(error.code, 'pet_not_found')
      assert.equal(error.status, 404)
      assert.equal(error.operation, 'getPet')
      assert.match(String(error.requestId), UUID)
    })

    test('When getPet is called several times, then each client warns once, naming the sunset date and the successor', async (t) => {
      const service = await startService(t, { store })
      const warnings: Error[] = []
      const client = clientOf(service, { onWarning: (warning) => { warnings.push(warning) } })
      const pet = await client.createPet({ name: 'Rex', categoryId: 1 })

      await client.getPet(pet.id)
      await client.getPet(pet.id)
      await petStoreError(() => client.getPet(999_999))
      await clientOf(service, { onWarning: (warning) => { warnings.push(warning) } }).getPet(pet.id)

      assert.equal(warnings.length, 2)
      const [warning] = warnings
      assert.equal(warning?.name, 'DeprecationWarning')
      assert.match(String(warning?.message), /getPet .*deprecated.* removed on 2030-12-05/)
      assert.match(String(warning?.message), /listPets with the status filter/)
      assert.ok(warning !== undefined && 'sunset' in warning && 'successor' in warning)
      assert.deepEqual(warning.sunset, new Date('2030-12-05T00:00:00Z'))
      // the successor link is built from PUBLIC_BASE_URL, whatever port the service listens on
      assert.match(String(warning.successor), /\/v1\/pets$/)
    })
  })
}

describe('@petstore/client deprecation warnings without onWarning', () => {
  test('When getPet is called, then the client hands one DeprecationWarning to process.emitWarning', async (t) => {
    const service = await startService(t)
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key })
    const pet = await client.createPet({ name: 'Rex', categoryId: 1 })
    // received in place of Node's process.emitWarning, which would print it in the middle of the test output
    const warnings: Error[] = []
    t.mock.method(process, 'emitWarning', (warning: string | Error) => { if (warning instanceof Error && warning.name === 'DeprecationWarning') warnings.push(warning) })

    await Promise.all([client.getPet(pet.id), client.getPet(pet.id)])

    assert.equal(warnings.length, 1)
    assert.equal((warnings[0] as Error & { code?: string }).code, 'PETSTORE_DEPRECATED_OPERATION')
    assert.match(String(warnings[0]?.message), /2030-12-05/)
  })
})

describe('createClient options', () => {
  test('When baseUrl does not end in /v1 or apiKey is empty, then createClient throws a TypeError naming it', () => {
    assert.throws(() => createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'k' }), { name: 'TypeError', message: /baseUrl/ })
    assert.throws(() => createClient({ baseUrl: 'ftp://127.0.0.1/v1', apiKey: 'k' }), { name: 'TypeError', message: /baseUrl/ })
    assert.throws(() => createClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey: ' ' }), { name: 'TypeError', message: /apiKey/ })
    assert.throws(() => createClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey: 'k', retries: -1 }), { name: 'TypeError', message: /retries/ })
  })
})
