import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, patchPet, testStores, type TestApp } from '../helpers/build-app.js'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { followFeed } from '../helpers/events.js'
import { untilServedFromCache } from '../helpers/page-cache.js'
import { patchOrder, placeOrder, placedOrder } from './orders-helpers.js'

async function getOrder (api: TestApp, id: number | string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url: `/v1/store/orders/${id}`, headers: { ...api.auth, ...headers } })
}

async function inventory (api: TestApp): Promise<Record<string, number>> {
  const res = await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function petStatus (api: TestApp, id: number): Promise<string> {
  return (await getPet(api, id)).json<{ status: string }>().status
}

for (const store of testStores()) {
  describe(`placeOrder (${store})`, () => {
    test('When an available pet is ordered, then 201 answers the placed order with its Location, and the pet is pending', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })

      const res = await placeOrder(api, { petId: pet.id })

      assert.equal(res.statusCode, 201, res.body)
      const order = res.json<Order>()
      assert.deepEqual(Object.keys(order).sort(), ['id', 'metadata', 'petId', 'placedAt', 'status'])
      assert.deepEqual(order.metadata, {})
      assert.equal(order.petId, pet.id)
      assert.equal(order.status, 'placed')
      assert.match(order.placedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.equal(res.headers.location, `/v1/store/orders/${order.id}`)
      assert.equal(await petStatus(api, pet.id), 'pending')
      assert.deepEqual((await getOrder(api, order.id)).json(), order)
    })

    test('When the pet is not available, then 409 pet_not_available says its status, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const sold = await createdPet(api, { name: 'Rex', categoryId: 1, status: 'sold' })
      assertError(await placeOrder(api, { petId: sold.id }), 'pet_not_available', '"sold"')
      const pet = await createdPet(api, { name: 'Max', categoryId: 1 })
      await placedOrder(api, pet.id)
      assertError(await placeOrder(api, { petId: pet.id }), 'pet_not_available', '"pending"')
      const list = await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: api.auth })
      assert.equal(list.json<Order[]>().length, 1)
    })

    test('When no pet has the id, then 422 pet_not_found', async (t) => {
      const api = await buildTestApp(t, { store })
      assertError(await placeOrder(api, { petId: 999 }), 'pet_not_found', '999', 422)
      assertError(await placeOrder(api, { petId: 9007199254740993n }), 'pet_not_found', '9007199254740993', 422)
    })

    test('When the body is invalid, then 400 names the field, and an unknown field is refused', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      assertError(await placeOrder(api, {}), 'invalid_request', 'petId')
      assertError(await placeOrder(api, { petId: 'one' }), 'invalid_request', 'petId')
      assertError(await placeOrder(api, { petId: 0 }), 'invalid_request', 'petId')
      assertError(await placeOrder(api, { petId: pet.id, quantity: 2 }), 'invalid_request', 'quantity')
      assert.equal(await petStatus(api, pet.id), 'available')
    })

    test('When a read key places an order, then 403 insufficient_scope, and it may read orders and the inventory', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const readKey = generateApiKey()
      await api.app.keyStore.createApiKey('reader', hashApiKey(readKey), 'read')
      const reader = { ...api, auth: { authorization: `Bearer ${readKey}` } }
      assertError(await placeOrder(reader, { petId: pet.id }), 'insufficient_scope')
      const order = await placedOrder(api, pet.id)
      assertError(await patchOrder(reader, order.id, { status: 'approved' }), 'insufficient_scope')
      assert.equal((await getOrder(reader, order.id)).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: reader.auth })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: reader.auth })).statusCode, 200)
    })

    test('When an order is repeated with its Idempotency-Key, then the first answer is replayed and one order exists', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const first = await placeOrder(api, { petId: pet.id }, { 'idempotency-key': 'order-1' })
      const again = await placeOrder(api, { petId: pet.id }, { 'idempotency-key': 'order-1' })
      assert.equal(first.statusCode, 201, first.body)
      assert.equal(again.statusCode, 201, again.body)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.deepEqual(again.json(), first.json())
      assert.equal(again.headers.location, first.headers.location)
      const other = await createdPet(api, { name: 'Max', categoryId: 1 })
      assertError(await placeOrder(api, { petId: other.id }, { 'idempotency-key': 'order-1' }), 'idempotency_key_reused')
      const list = await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: api.auth })
      assert.equal(list.json<Order[]>().length, 1)
    })

    test('When twenty orders for one pet arrive at once, then exactly one is 201 and nineteen are 409 pet_not_available', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const answers = await Promise.all(Array.from({ length: 20 }, async () => await placeOrder(api, { petId: pet.id })))
      assert.equal(answers.filter((res) => res.statusCode === 201).length, 1)
      for (const res of answers.filter((res) => res.statusCode !== 201)) assertError(res, 'pet_not_available', '"pending"')
      assert.deepEqual(await inventory(api), { available: 0, pending: 1, sold: 0 })
    })
  })

  describe(`updateOrder and getOrder (${store})`, () => {
    test('When an order is approved then delivered, then the pet is pending then sold, each answer with its ETag', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)

      const approved = await patchOrder(api, order.id, { status: 'approved' })
      assert.equal(approved.statusCode, 200, approved.body)
      assert.deepEqual(approved.json(), { ...order, status: 'approved', approvedAt: approved.json<Order>().approvedAt })
      assert.equal(approved.headers.etag, (await getOrder(api, order.id)).headers.etag)
      assert.equal(await petStatus(api, pet.id), 'pending')

      const delivered = await patchOrder(api, order.id, { status: 'delivered' }, { 'if-match': String(approved.headers.etag) })
      assert.equal(delivered.statusCode, 200, delivered.body)
      assert.equal(delivered.json<Order>().status, 'delivered')
      assert.equal(await petStatus(api, pet.id), 'sold')
      assertError(await patchOrder(api, order.id, { status: 'cancelled' }), 'invalid_transition', 'final')
    })

    test('When an order is cancelled, then its pet is available again and may be ordered anew', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      assert.equal((await patchOrder(api, order.id, { status: 'cancelled' })).statusCode, 200)
      assert.equal(await petStatus(api, pet.id), 'available')
      const second = await placedOrder(api, pet.id)
      assert.ok(second.id > order.id)
      assertError(await patchOrder(api, order.id, { status: 'approved' }), 'invalid_transition', '"cancelled" is final')
    })

    test('When a placed order is delivered directly, then 409 invalid_transition and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      assertError(await patchOrder(api, order.id, { status: 'delivered' }), 'invalid_transition', 'can only become "approved" or "cancelled"')
      assert.equal((await getOrder(api, order.id)).json<Order>().status, 'placed')
      assert.equal(await petStatus(api, pet.id), 'pending')
    })

    test('When If-Match is stale, then 412 and nothing changes; getOrder answers 304 to its current tag; unknown ids are 404', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      const read = await getOrder(api, order.id)
      const etag = String(read.headers.etag)
      assert.match(etag, /^"[^"]+"$/)
      const unchanged = await getOrder(api, order.id, { 'if-none-match': etag })
      assert.equal(unchanged.statusCode, 304)
      assert.equal(unchanged.body, '')
      assert.equal((await patchOrder(api, order.id, { status: 'approved' }, { 'if-match': etag })).statusCode, 200)
      assertError(await patchOrder(api, order.id, { status: 'cancelled' }, { 'if-match': etag }), 'precondition_failed')
      assert.equal((await getOrder(api, order.id)).json<Order>().status, 'approved')
      assertError(await getOrder(api, 999), 'order_not_found', '999')
      assertError(await patchOrder(api, 999, { status: 'approved' }), 'order_not_found', '999')
      assertError(await patchOrder(api, order.id, { status: 'shipped' }), 'invalid_request', 'status')
      assertError(await patchOrder(api, order.id, { status: 'approved', petId: 3 }), 'invalid_request', 'petId')
    })
  })

  describe(`listOrders (${store})`, () => {
    test('When orders are listed, then they come in id order, a page at a time through Link, filtered by status and petId', async (t) => {
      const api = await buildTestApp(t, { store })
      const orders: Order[] = []
      for (let i = 0; i < 5; i++) {
        const pet = await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })
        orders.push(await placedOrder(api, pet.id))
      }
      await patchOrder(api, (orders[1] as Order).id, { status: 'cancelled' })
      await patchOrder(api, (orders[3] as Order).id, { status: 'cancelled' })

      const first = await api.app.inject({ method: 'GET', url: '/v1/store/orders?limit=2', headers: api.auth })
      assert.equal(first.statusCode, 200, first.body)
      assert.deepEqual(first.json<Order[]>().map((order) => order.id), orders.slice(0, 2).map((order) => order.id))
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1] as string
      const url = new URL(next)
      const second = await api.app.inject({ method: 'GET', url: url.pathname + url.search, headers: api.auth })
      assert.deepEqual(second.json<Order[]>().map((order) => order.id), orders.slice(2, 4).map((order) => order.id))

      const cancelled = await api.app.inject({ method: 'GET', url: '/v1/store/orders?status=cancelled', headers: api.auth })
      assert.deepEqual(cancelled.json<Order[]>().map((order) => order.id), [orders[1], orders[3]].map((order) => (order as Order).id))
      assert.equal(cancelled.headers.link, undefined)
      const ofPet = await api.app.inject({ method: 'GET', url: `/v1/store/orders?petId=${(orders[2] as Order).petId}&status=placed`, headers: api.auth })
      assert.deepEqual(ofPet.json(), [orders[2]])

      const cursor = url.searchParams.get('cursor') as string
      assertError(await api.app.inject({ method: 'GET', url: `/v1/store/orders?status=placed&cursor=${cursor}`, headers: api.auth }), 'invalid_cursor')
      assertError(await api.app.inject({ method: 'GET', url: '/v1/store/orders?cursor=abc.def', headers: api.auth }), 'invalid_cursor')
      assertError(await api.app.inject({ method: 'GET', url: '/v1/store/orders?limit=101', headers: api.auth }), 'invalid_request', 'limit')
      assertError(await api.app.inject({ method: 'GET', url: '/v1/store/orders?status=open', headers: api.auth }), 'invalid_request', 'status')
      assertError(await api.app.inject({ method: 'GET', url: '/v1/store/orders?page=2', headers: api.auth }), 'invalid_request', 'page')
    })
  })

  describe(`orders and pets together (${store})`, () => {
    test('When a pet has an open order, then updatePet changing its status is 409 pet_has_open_order naming the order, while other fields still change', async (t) => {
      const api = await buildTestApp(t, { store })
      const other = await createdPet(api, { name: 'Bo', categoryId: 1 })
      await placedOrder(api, other.id)
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      assertError(await patchPet(api, pet.id, { status: 'sold' }), 'pet_has_open_order', `open order ${order.id},`)
      assertError(await patchPet(api, pet.id, { status: 'sold' }), 'pet_has_open_order', `PATCH /v1/store/orders/${order.id}`)
      assertError(await patchPet(api, pet.id, { status: 'available', name: 'Max' }), 'pet_has_open_order')
      const renamed = await patchPet(api, pet.id, { name: 'Max', status: 'pending' })
      assert.equal(renamed.statusCode, 200, renamed.body)
      assert.deepEqual(renamed.json(), { ...pet, name: 'Max', status: 'pending' })
      await patchOrder(api, order.id, { status: 'cancelled' })
      assert.equal((await patchPet(api, pet.id, { status: 'sold' })).statusCode, 200)
    })

    test('When pets are created, changed and ordered, then the inventory counts each status exactly', async (t) => {
      const api = await buildTestApp(t, { store })
      assert.deepEqual(await inventory(api), { available: 0, pending: 0, sold: 0 })
      const pets = await Promise.all(Array.from({ length: 6 }, async (_, i) => await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })))
      await createdPet(api, { name: 'Sold', categoryId: 1, status: 'sold' })
      assert.deepEqual(await inventory(api), { available: 6, pending: 0, sold: 1 })
      await patchPet(api, (pets[0] as { id: number }).id, { status: 'pending' })
      await patchPet(api, (pets[1] as { id: number }).id, { name: 'Renamed' })
      assert.deepEqual(await inventory(api), { available: 5, pending: 1, sold: 1 })
      const delivered = await placedOrder(api, (pets[2] as { id: number }).id)
      const cancelled = await placedOrder(api, (pets[3] as { id: number }).id)
      await placedOrder(api, (pets[4] as { id: number }).id)
      assert.deepEqual(await inventory(api), { available: 2, pending: 4, sold: 1 })
      await patchOrder(api, delivered.id, { status: 'approved' })
      await patchOrder(api, delivered.id, { status: 'delivered' })
      await patchOrder(api, cancelled.id, { status: 'cancelled' })
      assert.deepEqual(await inventory(api), { available: 3, pending: 2, sold: 2 })
    })

    test('When inventories are read beside creates, then each read sent after a 201 counts that pet (reads that arrive together may share one query, never one begun before them)', async (t) => {
      const api = await buildTestApp(t, { store })
      const reads = async (count: number): Promise<Array<Record<string, number>>> => await Promise.all(Array.from({ length: count }, async () => await inventory(api)))
      for (let created = 1; created <= 30; created++) {
        // reads in flight while the create commits, and the checked reads sent with others after its 201
        const [, during] = await Promise.all([createdPet(api, { name: `Pet ${created}`, categoryId: 1 }), reads(8)])
        for (const counts of during) assert.ok(counts.available === created - 1 || counts.available === created, JSON.stringify(counts))
        for (const counts of await reads(8)) assert.deepEqual(counts, { available: created, pending: 0, sold: 0 })
      }
    })

    test('When an order changes a pet whose list page is cached, then listPets shows the new status at once (no stale cached page)', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const list = async (): Promise<string[]> =>
        (await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).json<Array<{ status: string }>>().map((p) => p.status)
      /** Lists until a page showing `statuses` is served from the cache: the page a change must then make stale. */
      const cached = async (statuses: string[]): Promise<void> => {
        await untilServedFromCache(api.app, async () => { assert.deepEqual(await list(), statuses) })
      }

      await cached(['available'])
      const order = await placedOrder(api, pet.id)
      assert.deepEqual(await list(), ['pending'])
      await cached(['pending'])
      await patchOrder(api, order.id, { status: 'cancelled' })
      assert.deepEqual(await list(), ['available'])
    })

    test('When an order is placed and moved, then the feed holds pet.updated beside order.created and order.updated, filterable by type', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      const approved = (await patchOrder(api, order.id, { status: 'approved' })).json<Order>()
      const delivered = (await patchOrder(api, order.id, { status: 'delivered' })).json<Order>()

      const { events } = await followFeed(api)
      assert.deepEqual(events.map((event) => event.type), ['pet.created', 'pet.updated', 'order.created', 'order.updated', 'pet.updated', 'order.updated'])
      assert.deepEqual(events[1]?.data, { pet: { ...pet, status: 'pending' }, previous: { status: 'available' } })
      assert.deepEqual(events[2]?.data, { order })
      assert.deepEqual(events[3]?.data, { order: approved, previousStatus: 'placed', previous: { status: 'placed' } })
      assert.deepEqual(events[4]?.data, { pet: { ...pet, status: 'sold' }, previous: { status: 'pending' } })
      assert.deepEqual(events[5]?.data, { order: delivered, previousStatus: 'approved', previous: { status: 'approved' } })
      const { events: updates } = await followFeed(api, '/v1/events?limit=100&type=order.updated')
      assert.deepEqual(updates.map((event) => event.data), [events[3]?.data, events[5]?.data])
    })
  })
}
