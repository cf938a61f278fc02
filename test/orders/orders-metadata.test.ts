import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { METADATA_KEY_MAX_LENGTH, METADATA_MAX_KEYS, METADATA_VALUE_MAX_LENGTH } from '../../src/capabilities/orders/order-metadata.js'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, testStores, type TestApp } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { patchOrder, placeOrder, placedOrder } from './orders-helpers.js'

async function getOrder (api: TestApp, id: number): Promise<Order> {
  const res = await api.app.inject({ method: 'GET', url: `/v1/store/orders/${id}`, headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function listOrders (api: TestApp): Promise<Order[]> {
  return (await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: api.auth })).json()
}

/** `count` keys k00, k01, … each with the value "v". */
function manyKeys (count: number, prefix = 'k'): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [`${prefix}${String(index).padStart(2, '0')}`, 'v']))
}

function placedWith (res: LightMyRequestResponse): Order {
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

for (const store of testStores()) {
  describe(`order metadata at placement (${store})`, () => {
    test('When an order is placed with metadata, then the 201, getOrder, listOrders and order.created carry it, keys in code-unit order', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })

      const order = placedWith(await placeOrder(api, { petId: pet.id, metadata: { zone: 'B', channel: 'web', Ärger: 'keiner' } }))

      assert.deepEqual(order.metadata, { channel: 'web', zone: 'B', Ärger: 'keiner' })
      assert.deepEqual(Object.keys(order.metadata ?? {}), ['channel', 'zone', 'Ärger'])
      assert.deepEqual(await getOrder(api, order.id), order)
      assert.deepEqual(await listOrders(api), [order])
      const { events } = await followFeed(api, '/v1/events?limit=100&type=order.created')
      assert.deepEqual(events.map((event) => event.data), [{ order }])
    })

    test('When metadata breaks a limit at placement, then 400 names the field and the problem, and nothing is placed', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const longKey = 'k'.repeat(METADATA_KEY_MAX_LENGTH + 1)
      const place = async (metadata: unknown): Promise<LightMyRequestResponse> => await placeOrder(api, { petId: pet.id, metadata })

      assertError(await place(manyKeys(METADATA_MAX_KEYS + 1)), 'invalid_request', `body: field "metadata" must have at most ${METADATA_MAX_KEYS} keys`)
      assertError(await place({ [longKey]: 'v' }), 'invalid_request', `body: field "metadata.${longKey}": the key must be at most ${METADATA_KEY_MAX_LENGTH} characters long`)
      assertError(await place({ '': 'v' }), 'invalid_request', 'body: field "metadata.": the key must not be empty')
      assertError(await place({ note: 'x'.repeat(METADATA_VALUE_MAX_LENGTH + 1) }), 'invalid_request',
        `body: field "metadata.note" must be at most ${METADATA_VALUE_MAX_LENGTH} characters long`)
      assertError(await place({ note: '' }), 'invalid_request', 'body: field "metadata.note" must not be empty')
      assertError(await place({ note: 3 }), 'invalid_request', 'body: field "metadata.note" must be a string')
      assertError(await place({ note: null }), 'invalid_request', 'body: field "metadata.note" must be a string, not null')
      assertError(await place(['a']), 'invalid_request', 'body: field "metadata" must be an object')

      assert.deepEqual(await listOrders(api), [])
      assert.equal((await getPet(api, pet.id)).json<{ status: string }>().status, 'available')
    })

    test('When metadata is at its limits, then the order is placed', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const metadata = { ...manyKeys(METADATA_MAX_KEYS - 1), ['k'.repeat(METADATA_KEY_MAX_LENGTH)]: 'v'.repeat(METADATA_VALUE_MAX_LENGTH) }

      const order = placedWith(await placeOrder(api, { petId: pet.id, metadata }))

      assert.equal(Object.keys(order.metadata ?? {}).length, METADATA_MAX_KEYS)
      assert.deepEqual((await getOrder(api, order.id)).metadata, metadata)
    })
  })

  describe(`order metadata by updateOrder (${store})`, () => {
    test('When metadata is patched, then strings set keys, null removes them, keys left out stay, and order.updated carries it with the metadata before the change in previous; the pet stays put', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = placedWith(await placeOrder(api, { petId: pet.id, metadata: { channel: 'web', coupon: 'X1', zone: 'B' } }))

      const res = await patchOrder(api, order.id, { metadata: { channel: 'phone', coupon: null, gift: 'yes' } })

      assert.equal(res.statusCode, 200, res.body)
      const patched = res.json<Order>()
      assert.deepEqual(patched, { ...order, metadata: { channel: 'phone', gift: 'yes', zone: 'B' } })
      assert.deepEqual(await getOrder(api, order.id), patched)
      assert.equal((await getPet(api, pet.id)).json<{ status: string }>().status, 'pending')
      const { events } = await followFeed(api)
      assert.deepEqual(events.map((event) => event.type), ['pet.created', 'pet.updated', 'order.created', 'order.updated'])
      assert.deepEqual(events[3]?.data, { order: patched, previousStatus: 'placed', previous: { metadata: { channel: 'web', coupon: 'X1', zone: 'B' } } },
        'a change of metadata alone: previous holds the metadata it replaced, whole, and no status')

      const approved = await patchOrder(api, order.id, { status: 'approved', metadata: { gift: null } })
      assert.equal(approved.statusCode, 200, approved.body)
      const [, both] = (await followFeed(api, '/v1/events?limit=100&type=order.updated')).events
      assert.deepEqual(both?.data, { order: approved.json<Order>(), previousStatus: 'placed', previous: { status: 'placed', metadata: patched.metadata } },
        'a change of both: previous holds both')
    })

    test('When metadata is null, then every key is removed; when the patch changes nothing, then no event is recorded', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = placedWith(await placeOrder(api, { petId: pet.id, metadata: { channel: 'web' } }))

      assert.deepEqual((await patchOrder(api, order.id, { metadata: { channel: 'web' } })).json(), order)
      assert.deepEqual((await patchOrder(api, order.id, { metadata: { gone: null } })).json(), order)
      assert.deepEqual((await patchOrder(api, order.id, {})).json(), order)
      const cleared = await patchOrder(api, order.id, { metadata: null })

      assert.equal(cleared.statusCode, 200, cleared.body)
      assert.deepEqual(cleared.json<Order>().metadata, {})
      const { events } = await followFeed(api, '/v1/events?limit=100&type=order.updated')
      assert.deepEqual(events.map((event) => (event.data as { order: Order }).order.metadata), [{}])
    })

    test('When metadata changes on a final order, then it is kept and the status is not touched', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      const cancelled = (await patchOrder(api, order.id, { status: 'cancelled' })).json<Order>()

      const res = await patchOrder(api, order.id, { metadata: { refund: 'R-9' } })

      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { ...cancelled, metadata: { refund: 'R-9' } })
      assert.equal((await getPet(api, pet.id)).json<{ status: string }>().status, 'available')
    })

    test('When a patch would take metadata past its limits, then 400 names the field, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = placedWith(await placeOrder(api, { petId: pet.id, metadata: manyKeys(METADATA_MAX_KEYS) }))

      assertError(await patchOrder(api, order.id, { status: 'approved', metadata: { extra: 'v' } }), 'invalid_request',
        `body: field "metadata": after this patch the order would have ${METADATA_MAX_KEYS + 1} keys, but at most ${METADATA_MAX_KEYS} are allowed`)
      assertError(await patchOrder(api, order.id, { metadata: { k00: 'x'.repeat(METADATA_VALUE_MAX_LENGTH + 1) } }), 'invalid_request', 'body: field "metadata.k00"')
      assertError(await patchOrder(api, order.id, { metadata: { k00: '' } }), 'invalid_request', 'body: field "metadata.k00" must not be empty')
      assertError(await patchOrder(api, order.id, { metadata: 'none' }), 'invalid_request', 'body: field "metadata"')
      assert.deepEqual(await getOrder(api, order.id), order)
      assert.deepEqual((await followFeed(api, '/v1/events?limit=100&type=order.updated')).events, [])

      const swapped = await patchOrder(api, order.id, { metadata: { extra: 'v', k00: null } })
      assert.equal(swapped.statusCode, 200, swapped.body)
      assert.equal(Object.keys(swapped.json<Order>().metadata ?? {}).length, METADATA_MAX_KEYS)
    })
  })
}
