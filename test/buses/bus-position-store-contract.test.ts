import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { createBusPositionStore } from '../../src/capabilities/buses/store/create-bus-position-store.js'
import type { BusPositionStore } from '../../src/capabilities/buses/store/bus-position-store.js'
import { testStores, type StoreKind } from '../helpers/databases.js'
import { openStores } from '../helpers/stores.js'

// What every BusPositionStore promises, whatever its engine: a bus's position, the one lease of the instance
// publishing it (graphile-worker's shape: every write under the lease names its token), and what it has handed
// to its broker. Times are the caller's: these tests pass them in.

const LEASE_MS = 4_000
const T0 = 1_800_000_000_000

/** A store on a fresh database with `events` pets created first (each records pet.created). */
async function positionsAfter (t: TestContext, kind: StoreKind, events: number): Promise<{ positions: BusPositionStore, newest: number, create: () => Promise<number> }> {
  const stores = await openStores(t, kind)
  const create = async (): Promise<number> => {
    await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
    const { events: page } = await stores.events.listEvents({ afterId: 0, limit: 1_000 })
    return page.at(-1)?.id ?? 0
  }
  let newest = 0
  for (let n = 0; n < events; n++) newest = await create()
  return { positions: createBusPositionStore(stores.database), newest, create }
}

for (const kind of testStores()) {
  describe(`BusPositionStore contract (${kind})`, () => {
    test('When a bus is first ensured, then it starts at the newest event with nothing waiting, and ensuring it again changes nothing', async (t) => {
      const { positions, newest, create } = await positionsAfter(t, kind, 3)
      await positions.ensureBus('nats')
      const found = await positions.findBus('nats')
      assert.deepEqual(found, { publishedThrough: newest, attemptedThrough: newest, leaseToken: undefined, leaseHolder: undefined, leaseUntil: undefined, oldestWaitingAt: undefined })
      const next = await create()
      await positions.ensureBus('nats')
      const after = await positions.findBus('nats')
      assert.equal(after?.publishedThrough, newest)
      assert.ok(after?.oldestWaitingAt !== undefined && Math.abs(after.oldestWaitingAt - Date.now()) < 60_000, 'the waiting event\'s commit time, in ms')
      assert.ok(next > newest)
      assert.equal(await positions.findBus('rabbitmq'), undefined)
    })

    test('When a batch begins, then the lease is taken until now + lease, and another token cannot begin one until it ends', async (t) => {
      const { positions } = await positionsAfter(t, kind, 2)
      await positions.ensureBus('nats')
      const position = (await positions.findBus('nats'))?.publishedThrough ?? assert.fail('no bus')
      assert.equal(await positions.beginBatch('nats', 'a', 'host:1', position, position + 5, T0, LEASE_MS), T0 + LEASE_MS)
      assert.equal(await positions.beginBatch('nats', 'b', 'host:2', position, position + 5, T0 + LEASE_MS - 1, LEASE_MS), undefined, 'held by a')
      const held = await positions.findBus('nats')
      assert.equal(held?.leaseToken, 'a')
      assert.equal(held?.leaseHolder, 'host:1')
      assert.equal(held?.leaseUntil, T0 + LEASE_MS)
      // a renews its own; b takes it once it has ended
      assert.equal(await positions.beginBatch('nats', 'a', 'host:1', position, position + 6, T0 + 1_000, LEASE_MS), T0 + 1_000 + LEASE_MS)
      assert.equal(await positions.beginBatch('nats', 'b', 'host:2', position, position + 6, T0 + 1_000 + LEASE_MS, LEASE_MS), T0 + 1_000 + 2 * LEASE_MS)
      assert.equal((await positions.findBus('nats'))?.leaseToken, 'b')
    })

    test('When a batch begins at a position another instance has moved past, then it is not begun', async (t) => {
      const { positions } = await positionsAfter(t, kind, 1)
      await positions.ensureBus('nats')
      const position = (await positions.findBus('nats'))?.publishedThrough ?? assert.fail('no bus')
      await positions.beginBatch('nats', 'a', 'host:1', position, position + 3, T0, LEASE_MS)
      assert.equal(await positions.advanceBus('nats', 'a', position + 3, T0 + 10, LEASE_MS), true)
      assert.equal(await positions.beginBatch('nats', 'a', 'host:1', position, position + 3, T0 + 20, LEASE_MS), undefined, 'the position read is stale')
      assert.equal(await positions.beginBatch('nats', 'a', 'host:1', position + 3, position + 4, T0 + 20, LEASE_MS), T0 + 20 + LEASE_MS)
    })

    test('When batches begin, then what was handed to the broker only grows, whichever instance begins them', async (t) => {
      const { positions } = await positionsAfter(t, kind, 1)
      await positions.ensureBus('rabbitmq')
      const position = (await positions.findBus('rabbitmq'))?.publishedThrough ?? assert.fail('no bus')
      await positions.beginBatch('rabbitmq', 'a', 'host:1', position, position + 500, T0, LEASE_MS)
      // a takeover that begins a smaller batch from the same position (the broker slow) keeps the higher mark
      await positions.beginBatch('rabbitmq', 'b', 'host:2', position, position + 250, T0 + LEASE_MS, LEASE_MS)
      assert.equal((await positions.findBus('rabbitmq'))?.attemptedThrough, position + 500)
      assert.equal((await positions.findBus('rabbitmq'))?.publishedThrough, position)
    })

    test('When the position advances, then only the lease holder moves it, never backwards, renewing its lease and clearing nothing it should not', async (t) => {
      const { positions } = await positionsAfter(t, kind, 1)
      await positions.ensureBus('nats')
      const position = (await positions.findBus('nats'))?.publishedThrough ?? assert.fail('no bus')
      await positions.beginBatch('nats', 'a', 'host:1', position, position + 10, T0, LEASE_MS)
      assert.equal(await positions.advanceBus('nats', 'b', position + 10, T0 + 5, LEASE_MS), false, 'not b\'s lease')
      assert.equal(await positions.advanceBus('nats', 'a', position + 10, T0 + 5, LEASE_MS), true)
      assert.equal(await positions.advanceBus('nats', 'a', position + 4, T0 + 6, LEASE_MS), false, 'never backwards')
      const found = await positions.findBus('nats')
      assert.equal(found?.publishedThrough, position + 10)
      assert.equal(found?.leaseUntil, T0 + 5 + LEASE_MS)
    })

    test('When a failure is recorded and the lease released, then the status shows the error, no publisher, and another instance may begin at once', async (t) => {
      const { positions, newest } = await positionsAfter(t, kind, 2)
      await positions.ensureBus('nats')
      const now = Date.now()
      await positions.beginBatch('nats', 'a', 'host:1', newest, newest, now, LEASE_MS)
      await positions.recordBusFailure('nats', 'b', 'not b\'s to record', now)
      assert.equal((await positions.listBuses(now))[0]?.lastError, undefined)
      assert.equal((await positions.listBuses(now))[0]?.publisher, 'host:1')
      await positions.recordBusFailure('nats', 'a', 'connection refused', now + 1)
      await positions.releaseBus('nats', 'a', now + 2)
      const [status] = await positions.listBuses(now + 3)
      assert.equal(status?.lastError, 'connection refused')
      assert.equal(status?.lastErrorAt?.getTime(), now + 1)
      assert.equal(status?.publisher, undefined)
      assert.equal(status?.newestEventId, newest)
      assert.equal(status?.waitingEvents, 0)
      const released = await positions.findBus('nats')
      assert.equal(released?.leaseToken, undefined)
      assert.equal(released?.leaseUntil, now + 2, 'a release ends the lease at the time it was given back')
      assert.equal(await positions.beginBatch('nats', 'b', 'host:2', newest, newest, now + 3, LEASE_MS), now + 3 + LEASE_MS)
    })

    test('When events wait, then the status counts them and dates the oldest', async (t) => {
      const { positions, create } = await positionsAfter(t, kind, 1)
      await positions.ensureBus('rabbitmq')
      await create()
      await create()
      const [status] = await positions.listBuses(Date.now())
      assert.equal(status?.bus, 'rabbitmq')
      assert.equal(status?.waitingEvents, 2)
      assert.ok(status?.oldestWaitingAt !== undefined && Math.abs(status.oldestWaitingAt.getTime() - Date.now()) < 60_000)
    })
  })
}
