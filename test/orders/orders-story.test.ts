import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { CANCELLATION_REASON_MAX_LENGTH, type Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, testStores, type TestApp } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { patchOrder, placedOrder } from './orders-helpers.js'

async function getOrder (api: TestApp, id: number): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url: `/v1/store/orders/${id}`, headers: api.auth })
}

function moved (res: LightMyRequestResponse): Order {
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

for (const store of testStores()) {
  describe(`order times and cancellation reason (${store})`, () => {
    test('When an order is approved then delivered, then approvedAt and deliveredAt are set by each move, kept after, and absent before', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      assert.equal(order.approvedAt, undefined)

      const approved = moved(await patchOrder(api, order.id, { status: 'approved' }))
      const again = moved(await patchOrder(api, order.id, { status: 'approved' }))
      const delivered = moved(await patchOrder(api, order.id, { status: 'delivered' }))

      assert.deepEqual(Object.keys(approved).sort(), ['approvedAt', 'id', 'metadata', 'petId', 'placedAt', 'status'])
      assert.ok(Date.parse(approved.approvedAt ?? '') >= Date.parse(order.placedAt))
      assert.match(approved.approvedAt ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.deepEqual(again, approved)
      assert.deepEqual(delivered, { ...approved, status: 'delivered', deliveredAt: delivered.deliveredAt })
      assert.ok(Date.parse(delivered.deliveredAt ?? '') >= Date.parse(approved.approvedAt ?? ''))
      assert.equal(delivered.cancelledAt, undefined)
      assert.deepEqual((await getOrder(api, order.id)).json(), delivered)
      const { events } = await followFeed(api, '/v1/events?limit=100&type=order.updated')
      assert.deepEqual(events.map((event) => event.data), [{ order: approved, previousStatus: 'placed', previous: { status: 'placed' } }, { order: delivered, previousStatus: 'approved', previous: { status: 'approved' } }])
    })

    test('When an order is cancelled with a reason, then cancelledAt and cancellationReason are set and in order.updated; the same reason again changes nothing', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      const reason = 'The customer changed their mind.'

      const cancelled = moved(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: reason }))
      const repeated = moved(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: reason }))

      assert.deepEqual(cancelled, { ...order, status: 'cancelled', cancelledAt: cancelled.cancelledAt, cancellationReason: reason })
      assert.ok(Date.parse(cancelled.cancelledAt ?? '') >= Date.parse(order.placedAt))
      assert.deepEqual(repeated, cancelled)
      assert.deepEqual((await getOrder(api, order.id)).json(), cancelled)
      const { events } = await followFeed(api, '/v1/events?limit=100&type=order.updated')
      assert.deepEqual(events.map((event) => event.data), [{ order: cancelled, previousStatus: 'placed', previous: { status: 'placed' } }])
    })

    test('When an order is cancelled without a reason, then it has cancelledAt and no cancellationReason, and a reason given later is 400', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)

      const cancelled = moved(await patchOrder(api, order.id, { status: 'cancelled' }))

      assert.equal(cancelled.cancellationReason, undefined)
      assert.equal(typeof cancelled.cancelledAt, 'string')
      assertError(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: 'late' }), 'invalid_request', 'field "cancellationReason"')
      assert.deepEqual((await getOrder(api, order.id)).json(), cancelled)
    })

    test('When cancellationReason comes without the move to cancelled, or beyond its bounds, then 400 names it, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)

      assertError(await patchOrder(api, order.id, { cancellationReason: 'why' }), 'invalid_request', 'body: field "cancellationReason" is accepted only with "status": "cancelled"')
      assertError(await patchOrder(api, order.id, { status: 'approved', cancellationReason: 'why' }), 'invalid_request', 'field "cancellationReason"')
      assertError(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: 'x'.repeat(CANCELLATION_REASON_MAX_LENGTH + 1) }), 'invalid_request',
        `body: field "cancellationReason" must be at most ${CANCELLATION_REASON_MAX_LENGTH} characters long`)
      assertError(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: '' }), 'invalid_request', 'body: field "cancellationReason" must not be empty')
      assertError(await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: null }), 'invalid_request', 'body: field "cancellationReason" must be a string, not null')

      assert.deepEqual((await getOrder(api, order.id)).json(), order)
      assert.deepEqual((await followFeed(api, '/v1/events?limit=100&type=order.updated')).events, [])
    })
  })
}
