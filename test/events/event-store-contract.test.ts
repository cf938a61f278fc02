import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestContext } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { testStores, type StoreKind } from '../helpers/databases.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'

// far enough ahead that every event recorded by a test occurred before it
const FUTURE = new Date(Date.now() + 24 * 3_600_000)

/** Three pets created and the first one changed: events pet.created ×3 then pet.updated, their ids in order. */
async function fourEvents (t: TestContext, kind: StoreKind, databaseUrl?: string): Promise<{ stores: OpenedStores, pets: Pet[], ids: number[] }> {
  const stores = await openStores(t, kind, databaseUrl)
  const pets: Pet[] = []
  for (const name of ['Rex', 'Tom', 'Kit']) pets.push(await stores.pets.createPet({ name, categoryId: 1, status: 'available' }))
  await stores.pets.updatePet(pets[0]!.id, { status: 'pending' })
  const { events } = await stores.events.listEvents({ afterId: 0, limit: 10 })
  return { stores, pets, ids: events.map((event) => event.id) }
}

// What every EventStore promises, whatever its engine (events are written by the changes' own stores: here the pet store)
for (const kind of testStores()) {
  describe(`EventStore contract (${kind})`, () => {
    test('When events are listed, then they come in id order after afterId, at most limit, each as recorded', async (t) => {
      const { stores, pets, ids } = await fourEvents(t, kind)

      const { events, purgedThrough } = await stores.events.listEvents({ afterId: 0, limit: 10 })

      assert.equal(ids.length, 4)
      assert.deepEqual([...ids].sort((a, b) => a - b), ids)
      assert.deepEqual(events.map((event) => event.type), ['pet.created', 'pet.created', 'pet.created', 'pet.updated'])
      assert.deepEqual(events.map((event) => event.data), [
        ...pets.map((pet) => ({ pet })),
        { pet: { ...pets[0], status: 'pending' }, previous: { status: 'available' } }
      ])
      for (const event of events) assert.ok(!Number.isNaN(Date.parse(event.occurredAt)), `occurredAt ${event.occurredAt}`)
      assert.equal(purgedThrough, 0)
      assert.deepEqual((await stores.events.listEvents({ afterId: ids[1]!, limit: 1 })).events.map((event) => event.id), [ids[2]])
      assert.deepEqual((await stores.events.listEvents({ afterId: ids[3]!, limit: 10 })).events, [])
    })

    test('When types are asked for, then only events of those types come, in id order', async (t) => {
      const { stores, ids } = await fourEvents(t, kind)

      const updated = await stores.events.listEvents({ afterId: 0, limit: 10, types: ['pet.updated'] })
      const both = await stores.events.listEvents({ afterId: 0, limit: 10, types: ['pet.updated', 'pet.created'] })
      const ofOrders = await stores.events.listEvents({ afterId: 0, limit: 10, types: ['order.created'] })

      assert.deepEqual(updated.events.map((event) => event.id), [ids[3]])
      assert.deepEqual(both.events.map((event) => event.id), ids)
      assert.deepEqual(ofOrders.events, [])
    })

    test('When nothing is retained, then oldestEventId is undefined; otherwise the smallest id', async (t) => {
      const empty = await openStores(t, kind)
      assert.equal(await empty.events.oldestEventId(), undefined)

      const { stores, ids } = await fourEvents(t, kind)

      assert.equal(await stores.events.oldestEventId(), ids[0])
    })

    test('When events are purged, then only those before the cutoff go, oldest first, at most batchSize a pass, and readers learn what was purged', async (t) => {
      const { stores, ids } = await fourEvents(t, kind)

      assert.deepEqual(await stores.events.purgeEventsBefore(new Date(0), 10), { deleted: 0, purgedThrough: 0 })
      assert.deepEqual(await stores.events.purgeEventsBefore(FUTURE, 2), { deleted: 2, purgedThrough: ids[1] })

      assert.equal(await stores.events.oldestEventId(), ids[2])
      assert.deepEqual(await stores.events.listEvents({ afterId: 0, limit: 10 }), {
        events: (await stores.events.listEvents({ afterId: ids[1]!, limit: 10 })).events,
        purgedThrough: ids[1]
      })
      // the purged events were all pet.created: a reader of pet.updated alone has missed nothing
      assert.equal((await stores.events.listEvents({ afterId: 0, limit: 10, types: ['pet.updated'] })).purgedThrough, 0)
      assert.equal((await stores.events.listEvents({ afterId: 0, limit: 10, types: ['pet.created'] })).purgedThrough, ids[1])

      assert.deepEqual(await stores.events.purgeEventsBefore(FUTURE, 10), { deleted: 2, purgedThrough: ids[3] })
      assert.equal(await stores.events.oldestEventId(), undefined)
      assert.deepEqual(await stores.events.listEvents({ afterId: 0, limit: 10, types: ['pet.updated'] }), { events: [], purgedThrough: ids[3] })
      assert.deepEqual(await stores.events.purgeEventsBefore(FUTURE, 10), { deleted: 0, purgedThrough: ids[3] })
    })

    test('When an event is looked up by id, then it is the event a page holds; a missing id says how far retention deleted, whatever the types deleted', async (t) => {
      const { stores, ids } = await fourEvents(t, kind)
      const { events } = await stores.events.listEvents({ afterId: 0, limit: 10 })

      for (const [index, id] of ids.entries()) assert.deepEqual(await stores.events.findEvent(id), { found: true, event: events[index] })
      assert.deepEqual(await stores.events.findEvent(ids[3]! + 1), { found: false, purgedThrough: 0 })

      // the first two, both pet.created: the mark is the highest id deleted of any type
      await stores.events.purgeEventsBefore(FUTURE, 2)
      assert.deepEqual(await stores.events.findEvent(ids[0]!), { found: false, purgedThrough: ids[1] })
      assert.deepEqual(await stores.events.findEvent(ids[1]!), { found: false, purgedThrough: ids[1] })
      assert.deepEqual(await stores.events.findEvent(ids[2]!), { found: true, event: events[2] })
      assert.deepEqual(await stores.events.findEvent(ids[3]! + 1), { found: false, purgedThrough: ids[1] })
    })

    test('When two instances purge at once, then every event is deleted exactly once', async (t) => {
      const { stores, ids } = await fourEvents(t, kind)
      const other = await openStores(t, kind, stores.databaseUrl)

      const purges = await Promise.all([stores.events.purgeEventsBefore(FUTURE, 1), other.events.purgeEventsBefore(FUTURE, 1),
        stores.events.purgeEventsBefore(FUTURE, 10), other.events.purgeEventsBefore(FUTURE, 10)])

      assert.equal(purges.reduce((sum, purge) => sum + purge.deleted, 0), ids.length)
      assert.equal(await stores.events.oldestEventId(), undefined)
      assert.equal((await other.events.listEvents({ afterId: 0, limit: 10 })).purgedThrough, ids[3])
    })
  })
}
