import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { PetStore } from '../../src/capabilities/pets/store/pet-store.js'
import { petCreatedData } from '../../src/capabilities/pets/pet-events.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { testStores } from '../helpers/databases.js'
import { openStores } from '../helpers/stores.js'

/** The store's list version once it can tell one (at once on SQLite; on PostgreSQL once its LISTEN connection is up), or once it differs from `other`. */
async function versionOf (store: PetStore, other?: number): Promise<number> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const version = store.listVersion()
    if (version !== undefined && version !== other) return version
    assert.ok(Date.now() < deadline, other === undefined ? 'the store never told its list version' : `the list version stayed ${other}`)
    await delay(10)
  }
}

// What every PetStore promises, whatever its engine
for (const kind of testStores()) {
  describe(`PetStore contract (${kind})`, () => {
    test('When a page is asked for, then it starts after afterId, honours the filter and says whether more exist', async (t) => {
      const { pets: store } = await openStores(t, kind)
      const statuses = ['available', 'sold', 'available', 'pending', 'available'] as const
      const pets = []
      for (const [i, status] of statuses.entries()) pets.push(await store.createPet({ name: `p${i}`, categoryId: i, status }))

      assert.deepEqual(await store.listPets({ limit: 2 }), { pets: pets.slice(0, 2), hasMore: true })
      assert.deepEqual(await store.listPets({ limit: 2, afterId: pets[3]!.id }), { pets: pets.slice(4), hasMore: false })
      assert.deepEqual(await store.listPets({ limit: 2, status: 'available' }), { pets: [pets[0], pets[2]], hasMore: true })
      assert.deepEqual(await store.listPets({ limit: 2, status: 'available', afterId: pets[2]!.id }), { pets: [pets[4]], hasMore: false })
    })

    test('When many pets are asked for at once (one read for the lot), then each caller gets its own pet, a missing or repeated id included', async (t) => {
      const { pets: store } = await openStores(t, kind)
      const pets: Pet[] = []
      for (let i = 0; i < 150; i++) pets.push(await store.createPet({ name: `p${i}`, categoryId: i, status: 'available' }))
      // more than one read's bound (100), the same id twice, ids no pet has, one beyond 2^53 and one at 2^63 - 1
      const asked = [...pets.map((pet) => pet.id), pets[7]!.id, 999_999, 2n ** 60n, 2n ** 63n - 1n]

      const found = await Promise.all(asked.map(async (id) => await store.findPetById(id)))

      assert.deepEqual(found, [...pets, pets[7], undefined, undefined, undefined])
    })

    test('When ids and category ids are at the edge of exact JavaScript integers, then they round-trip as numbers', async (t) => {
      const { pets: store } = await openStores(t, kind)

      const low = await store.createPet({ name: 'low', categoryId: -Number.MAX_SAFE_INTEGER, status: 'sold' })
      const high = await store.createPet({ name: 'high', categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' })

      assert.deepEqual(await store.findPetById(low.id), { id: low.id, name: 'low', categoryId: -Number.MAX_SAFE_INTEGER, status: 'sold' })
      assert.deepEqual(await store.findPetById(high.id), { id: high.id, name: 'high', categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' })
      assert.equal(typeof high.id, 'number')
    })

    test('When pets are created together, then each pet.created carries petCreatedData of the pet created, digit for digit', async (t) => {
      const { pets: store, events } = await openStores(t, kind)

      // one event-loop turn: one group commit (on PostgreSQL one statement, its events built in SQL)
      const created = await Promise.all([
        store.createPet({ name: 'Rex', categoryId: 9007199254740993n, status: 'available' }),
        store.createPet({ name: 'Kit "the cat"', categoryId: -1, status: 'sold' })
      ])

      const { events: recorded } = await events.listEvents({ afterId: 0, limit: 10 })
      assert.deepEqual(recorded.map(({ type, data }) => ({ type, data })), created.map((pet) => ({ type: 'pet.created', data: petCreatedData(pet) })))
    })

    test('When updatePet changes a pet, then it answers the pet before and after and keeps the change; the precondition sees the pet as stored', async (t) => {
      const { pets: store } = await openStores(t, kind)
      const pet = await store.createPet({ name: 'Rex', categoryId: 3, status: 'available' })
      const judged: Pet[] = []

      const outcome = await store.updatePet(pet.id, { name: 'Max', status: 'pending' }, (current) => { judged.push(current); return true })

      const changed = { ...pet, name: 'Max', status: 'pending' as const }
      assert.deepEqual(outcome, { outcome: 'updated', pet: changed, previous: pet })
      assert.deepEqual(judged, [pet])
      assert.deepEqual(await store.findPetById(pet.id), changed)
      assert.deepEqual(await store.listPets({ limit: 10, status: 'pending' }), { pets: [changed], hasMore: false })
    })

    test('When updatePet finds no pet, a failing precondition or a forbidden move, then it says which and writes nothing', async (t) => {
      const { pets: store } = await openStores(t, kind)
      const sold = await store.createPet({ name: 'Rex', categoryId: 3, status: 'sold' })

      assert.deepEqual(await store.updatePet(sold.id + 1, { name: 'Max' }), { outcome: 'not_found' })
      assert.deepEqual(await store.updatePet(sold.id, { name: 'Max' }, () => false), { outcome: 'precondition_failed' })
      assert.deepEqual(await store.updatePet(sold.id, { name: 'Max', status: 'available' }), { outcome: 'invalid_transition', from: 'sold', to: 'available' })
      assert.deepEqual(await store.findPetById(sold.id), sold)
    })

    test('When updatePet writes, then the list version moves, on this store and on another on the same database; when it changes nothing, it stays', async (t) => {
      const { pets: store, databaseUrl } = await openStores(t, kind)
      const { pets: other } = await openStores(t, kind, databaseUrl)
      const pet = await store.createPet({ name: 'Rex', categoryId: 3, status: 'available' })
      const before = await versionOf(store)
      const otherBefore = await versionOf(other)

      await store.updatePet(pet.id, { name: 'Rex', status: 'available' })
      assert.equal(store.listVersion(), before, 'a patch that changes nothing leaves the version')
      await store.updatePet(pet.id, { status: 'sold' })

      assert.notEqual(store.listVersion(), before, 'this store sees its own write at once')
      await versionOf(other, otherBefore)
    })
  })
}
