import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { IdempotencyClaimLostError } from '../../src/capabilities/idempotency/claims.js'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import type { Event } from '../../src/capabilities/events/event-types.js'
import { stringifyJson } from '../../src/infra/json/exact-json.js'
import { testStores } from '../helpers/databases.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'

/** The events recorded after `afterId`, as type and data. */
async function eventsAfter (stores: OpenedStores, afterId: number): Promise<Array<Pick<Event, 'type' | 'data'>>> {
  const { events } = await stores.events.listEvents({ afterId, limit: 100 })
  return events.map(({ type, data }) => ({ type, data }))
}

/** The id of the newest event (0: none). */
async function lastEventId (stores: OpenedStores): Promise<number> {
  const { events } = await stores.events.listEvents({ afterId: 0, limit: 1000 })
  return events.at(-1)?.id ?? 0
}

/** Places an order that the store must place. */
async function place (stores: OpenedStores, petId: number, metadata: Record<string, string> = {}): Promise<Order> {
  const outcome = await stores.orders.placeOrder(petId, metadata)
  assert.equal(outcome.outcome, 'placed')
  return (outcome as { order: Order }).order
}

// What every OrderStore promises, whatever its engine
for (const kind of testStores()) {
  describe(`OrderStore contract (${kind})`, () => {
    test('When an available pet is ordered, then the order is placed, the pet becomes pending and pet.updated then order.created are recorded', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const before = await lastEventId(stores)

      const outcome = await stores.orders.placeOrder(pet.id, { channel: 'web' })

      assert.equal(outcome.outcome, 'placed')
      const { order } = outcome as { order: Order }
      assert.deepEqual({ ...order, placedAt: 'when' }, { id: order.id, petId: pet.id, status: 'placed', placedAt: 'when', metadata: { channel: 'web' } })
      assert.ok(Math.abs(Date.parse(order.placedAt) - Date.now()) < 60_000, `placedAt ${order.placedAt}`)
      assert.deepEqual(await stores.orders.findOrderById(order.id), order)
      assert.deepEqual(await stores.pets.findPetById(pet.id), { ...pet, status: 'pending' })
      assert.deepEqual(await eventsAfter(stores, before), [
        { type: 'pet.updated', data: { pet: { ...pet, status: 'pending' }, previous: { status: 'available' } } },
        { type: 'order.created', data: { order } }
      ])
    })

    test('When the pet does not exist or is not available, then placeOrder says which and writes nothing', async (t) => {
      const stores = await openStores(t, kind)
      const sold = await stores.pets.createPet({ name: 'Tom', categoryId: 1, status: 'sold' })
      const before = await lastEventId(stores)

      assert.deepEqual(await stores.orders.placeOrder(sold.id + 1000, {}), { outcome: 'pet_not_found' })
      assert.deepEqual(await stores.orders.placeOrder(9007199254740993n, {}), { outcome: 'pet_not_found' })
      assert.deepEqual(await stores.orders.placeOrder(sold.id, {}), { outcome: 'pet_not_available', petStatus: 'sold' })

      assert.deepEqual(await stores.orders.listOrders({ limit: 10 }), { orders: [], hasMore: false })
      assert.deepEqual(await eventsAfter(stores, before), [])
    })

    test('When one pet is ordered several times at once, then exactly one order is placed and the others are told the pet is pending', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Kit', categoryId: 1, status: 'available' })

      const outcomes = await Promise.all(Array.from({ length: 5 }, async () => await stores.orders.placeOrder(pet.id, {})))

      assert.equal(outcomes.filter((outcome) => outcome.outcome === 'placed').length, 1)
      assert.deepEqual(outcomes.filter((outcome) => outcome.outcome !== 'placed'), Array.from({ length: 4 }, () => ({ outcome: 'pet_not_available', petStatus: 'pending' })))
      assert.equal((await stores.orders.listOrders({ limit: 10 })).orders.length, 1)
    })

    test('When orders for overlapping pets arrive turn after turn while earlier ones are being placed, then each pet gets one order, and ids and events follow the commits', async (t) => {
      const stores = await openStores(t, kind)
      const pets = []
      for (let i = 0; i < 24; i++) pets.push(await stores.pets.createPet({ name: `Wave ${i}`, categoryId: 1, status: 'available' }))
      const before = await lastEventId(stores)

      // six waves, each in a turn of its own (an earlier batch still being written), each ordering eight pets, four of them the wave before's too
      const placements: Array<Promise<Awaited<ReturnType<typeof stores.orders.placeOrder>>>> = []
      for (let wave = 0; wave < 6; wave++) {
        for (const pet of pets.slice(wave * 4, wave * 4 + 8)) placements.push(stores.orders.placeOrder(pet.id, { wave: String(wave) }))
        await nextTurn()
      }
      const outcomes = await Promise.all(placements)

      const placed = outcomes.flatMap((outcome) => outcome.outcome === 'placed' ? [outcome.order] : [])
      assert.deepEqual(placed.map((order) => order.petId).sort((a, b) => Number(a) - Number(b)), pets.map((pet) => pet.id), 'each pet exactly one order')
      assert.ok(outcomes.every((outcome) => outcome.outcome === 'placed' || (outcome.outcome === 'pet_not_available' && outcome.petStatus === 'pending')))
      // the feed holds each order's pet.updated then its order.created, in the order of the orders' ids: ids were drawn in commit order
      const byId = [...placed].sort((a, b) => Number(a.id) - Number(b.id))
      const feed = await eventsAfter(stores, before)
      assert.deepEqual(feed.map((event) => event.type), byId.flatMap(() => ['pet.updated', 'order.created']))
      assert.deepEqual(feed.flatMap((event) => event.type === 'order.created' ? [(event.data as { order: Order }).order.id] : []), byId.map((order) => order.id))
      assert.deepEqual((await stores.orders.listOrders({ limit: 100 })).orders.map((order) => order.id), byId.map((order) => order.id))
    })

    test('When placeOrder completes a held Idempotency-Key claim, then the claim replays the order; a claim no longer held places nothing', async (t) => {
      const stores = await openStores(t, kind)
      const [first, second] = [await stores.pets.createPet({ name: 'A', categoryId: 1, status: 'available' }), await stores.pets.createPet({ name: 'B', categoryId: 1, status: 'available' })]
      const claim = { scope: 'contract', key: 'k1', fingerprint: 'f', now: new Date(), leaseMs: 60_000, ttlMs: 3_600_000 }
      assert.deepEqual(await stores.idempotency.claimIdempotencyKey({ ...claim, token: 't1' }), { outcome: 'claimed' })

      const outcome = await stores.orders.placeOrder(first.id, {}, { scope: 'contract', key: 'k1', token: 't1' })
      await assert.rejects(stores.orders.placeOrder(second.id, {}, { scope: 'contract', key: 'k2', token: 'never-claimed' }), IdempotencyClaimLostError)

      assert.equal(outcome.outcome, 'placed')
      const { order } = outcome as { order: Order }
      assert.deepEqual(await stores.idempotency.claimIdempotencyKey({ ...claim, token: 't2' }), { outcome: 'completed', response: { status: 201, body: stringifyJson(order) } })
      assert.deepEqual((await stores.orders.listOrders({ limit: 10 })).orders, [order])
      assert.equal((await stores.pets.findPetById(second.id))?.status, 'available')
    })

    test('When orders without a key are placed together with one whose claim is no longer held, then theirs are placed with their events and that one alone is undone', async (t) => {
      const stores = await openStores(t, kind)
      const [before, lost, after] = [
        await stores.pets.createPet({ name: 'Before', categoryId: 1, status: 'available' }),
        await stores.pets.createPet({ name: 'Lost', categoryId: 2, status: 'available' }),
        await stores.pets.createPet({ name: 'After', categoryId: 3, status: 'available' })
      ]
      const since = await lastEventId(stores)

      // submitted in one turn: one batch, the lost claim between two placements without one
      const [first, late, last] = await Promise.allSettled([
        stores.orders.placeOrder(before.id, {}),
        stores.orders.placeOrder(lost.id, {}, { scope: 'contract', key: 'k', token: 'never-claimed' }),
        stores.orders.placeOrder(after.id, {})
      ])

      assert.equal(late?.status, 'rejected')
      assert.ok(late.reason instanceof IdempotencyClaimLostError, String(late.reason))
      assert.ok(first?.status === 'fulfilled' && first.value.outcome === 'placed' && last?.status === 'fulfilled' && last.value.outcome === 'placed')
      const placed = [first.value.order, last.value.order]
      assert.deepEqual((await stores.orders.listOrders({ limit: 10 })).orders.map((order) => order.petId), [before.id, after.id])
      assert.deepEqual(await Promise.all([before, lost, after].map(async (pet) => (await stores.pets.findPetById(pet.id))?.status)), ['pending', 'available', 'pending'])
      const recorded = (await eventsAfter(stores, since)).map(({ type, data }) => {
        const { order, pet } = data as { order?: Order, pet?: { id: number } }
        return [type, order?.id ?? pet?.id]
      })
      assert.deepEqual(recorded, [['pet.updated', before.id], ['order.created', placed[0]?.id], ['pet.updated', after.id], ['order.created', placed[1]?.id]])
    })

    test('When an id no order has is looked up, then findOrderById answers undefined, also beyond 2^53', async (t) => {
      const stores = await openStores(t, kind)

      assert.equal(await stores.orders.findOrderById(1), undefined)
      assert.equal(await stores.orders.findOrderById(9223372036854775807n), undefined)
    })

    test('When a page is asked for, then it starts after afterId, honours the status and pet filters and says whether more exist', async (t) => {
      const stores = await openStores(t, kind)
      const pets = []
      for (const name of ['a', 'b', 'c', 'd']) pets.push(await stores.pets.createPet({ name, categoryId: 1, status: 'available' }))
      const orders = []
      for (const pet of pets) orders.push(await place(stores, pet.id))
      const cancelled = await stores.orders.updateOrder(orders[1]!.id, { status: 'cancelled' })
      assert.equal(cancelled.outcome, 'updated')
      orders[1] = (cancelled as { order: Order }).order
      const again = await place(stores, pets[1]!.id)

      assert.deepEqual(await stores.orders.listOrders({ limit: 2 }), { orders: orders.slice(0, 2), hasMore: true })
      assert.deepEqual(await stores.orders.listOrders({ limit: 2, afterId: orders[2]!.id }), { orders: [orders[3], again], hasMore: false })
      assert.deepEqual(await stores.orders.listOrders({ limit: 10, status: 'placed' }), { orders: [orders[0], orders[2], orders[3], again], hasMore: false })
      assert.deepEqual(await stores.orders.listOrders({ limit: 1, petId: pets[1]!.id }), { orders: [orders[1]], hasMore: true })
      assert.deepEqual(await stores.orders.listOrders({ limit: 10, petId: pets[1]!.id, status: 'placed' }), { orders: [again], hasMore: false })
      assert.deepEqual(await stores.orders.listOrders({ limit: 10, petId: 9007199254740993n }), { orders: [], hasMore: false })
    })

    test('When an order moves, then its time is set, the pet moves with it and order.updated (and pet.updated when the pet moved) are recorded', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const order = await place(stores, pet.id)
      const judged: Order[] = []
      const beforeApproval = await lastEventId(stores)

      const approved = await stores.orders.updateOrder(order.id, { status: 'approved' }, (current) => { judged.push(current); return true })

      assert.equal(approved.outcome, 'updated')
      const { order: approvedOrder, previous, petStatus } = approved as { order: Order, previous: Order, petStatus: unknown }
      assert.deepEqual(judged, [order])
      assert.deepEqual(previous, order)
      assert.equal(petStatus, undefined)
      assert.deepEqual({ ...approvedOrder, approvedAt: 'when' }, { ...order, status: 'approved', approvedAt: 'when' })
      assert.deepEqual(await stores.orders.findOrderById(order.id), approvedOrder)
      assert.deepEqual(await eventsAfter(stores, beforeApproval), [{ type: 'order.updated', data: { order: approvedOrder, previousStatus: 'placed', previous: { status: 'placed' } } }])
      assert.equal((await stores.pets.findPetById(pet.id))?.status, 'pending')

      const beforeDelivery = await lastEventId(stores)
      const delivered = await stores.orders.updateOrder(order.id, { status: 'delivered' })

      assert.equal(delivered.outcome, 'updated')
      const deliveredOrder = (delivered as { order: Order }).order
      assert.equal((delivered as { petStatus: unknown }).petStatus, 'sold')
      assert.equal(typeof deliveredOrder.deliveredAt, 'string')
      assert.deepEqual(await stores.pets.findPetById(pet.id), { ...pet, status: 'sold' })
      assert.deepEqual(await eventsAfter(stores, beforeDelivery), [
        { type: 'pet.updated', data: { pet: { ...pet, status: 'sold' }, previous: { status: 'pending' } } },
        { type: 'order.updated', data: { order: deliveredOrder, previousStatus: 'approved', previous: { status: 'approved' } } }
      ])
    })

    test('When an order is cancelled with a reason, then the pet is available again and the reason is kept', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const order = await place(stores, pet.id)

      const cancelled = await stores.orders.updateOrder(order.id, { status: 'cancelled', cancellationReason: 'changed my mind' })

      assert.equal(cancelled.outcome, 'updated')
      const cancelledOrder = (cancelled as { order: Order }).order
      assert.equal(cancelledOrder.cancellationReason, 'changed my mind')
      assert.equal(typeof cancelledOrder.cancelledAt, 'string')
      assert.deepEqual(await stores.orders.findOrderById(order.id), cancelledOrder)
      assert.equal((await stores.pets.findPetById(pet.id))?.status, 'available')
    })

    test('When updateOrder finds no order, a failing precondition, a forbidden move or nothing to change, then it says so and records nothing', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const order = await place(stores, pet.id, { channel: 'web' })
      const before = await lastEventId(stores)

      assert.deepEqual(await stores.orders.updateOrder(order.id + 1000, { status: 'approved' }), { outcome: 'not_found' })
      assert.deepEqual(await stores.orders.updateOrder(order.id, { status: 'approved' }, () => false), { outcome: 'precondition_failed' })
      assert.deepEqual(await stores.orders.updateOrder(order.id, { status: 'delivered' }), { outcome: 'invalid_transition', from: 'placed', to: 'delivered' })
      assert.deepEqual(await stores.orders.updateOrder(order.id, { status: 'placed', metadata: { channel: 'web' } }),
        { outcome: 'updated', order, previous: order, petStatus: undefined })

      assert.deepEqual(await stores.orders.findOrderById(order.id), order)
      assert.equal((await stores.pets.findPetById(pet.id))?.status, 'pending')
      assert.deepEqual(await eventsAfter(stores, before), [])
    })

    test('When only metadata changes, then order.updated is recorded and the pet is left alone', async (t) => {
      const stores = await openStores(t, kind)
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const order = await place(stores, pet.id, { channel: 'web' })
      const before = await lastEventId(stores)

      const changed = await stores.orders.updateOrder(order.id, { metadata: { channel: null, buyer: 'b-1' } })

      assert.equal(changed.outcome, 'updated')
      const changedOrder = (changed as { order: Order }).order
      assert.deepEqual(changedOrder, { ...order, metadata: { buyer: 'b-1' } })
      assert.deepEqual(await stores.orders.findOrderById(order.id), changedOrder)
      assert.deepEqual((await eventsAfter(stores, before)).map((event) => event.type), ['order.updated'])
    })
  })
}

describe('OrderStore on SQLite: an update judged before its write lock', () => {
  test('When another process commits to the order between the read without the lock and the locked one, then the change is judged again on what it committed, and nothing it wrote is lost', async (t) => {
    const stores = await openStores(t, 'sqlite')
    const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
    const order = await place(stores, pet.id, { channel: 'web' })
    // better-sqlite3 as the store loads it: a second connection, as another process would have
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
    const other = new Database(stores.databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    t.after(() => { other.close() })
    const judged: Order[] = []

    // the precondition runs synchronously on each read: the first time, the other connection commits in between
    const outcome = await stores.orders.updateOrder(order.id, { metadata: { gift: 'yes' } }, (current) => {
      if (judged.length === 0) other.prepare('UPDATE orders SET metadata = ? WHERE id = ?').run('{"channel":"web","desk":"3"}', order.id)
      judged.push(current)
      return true
    })

    assert.equal(outcome.outcome, 'updated')
    const metadata = { channel: 'web', desk: '3', gift: 'yes' }
    assert.deepEqual(judged.map((current) => current.metadata), [{ channel: 'web' }, { channel: 'web', desk: '3' }])
    assert.deepEqual((outcome as { order: Order }).order.metadata, metadata)
    assert.deepEqual((await stores.orders.findOrderById(order.id))?.metadata, metadata)
  })
})
