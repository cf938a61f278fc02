import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, testStores, type TestApp } from '../helpers/build-app.js'
import { patchOrder, placeOrder } from './orders-helpers.js'

async function getOrder (api: TestApp, id: number): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url: `/v1/store/orders/${id}`, headers: api.auth })
}

for (const store of testStores()) {
  describe(`a placed order's ETag (${store})`, () => {
    test('When an order is placed, then its 201 carries the ETag getOrder gives, and If-Match with it changes the order at once; a stale tag is 412', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })

      const placed = await placeOrder(api, { petId: pet.id, metadata: { channel: 'web' } })

      assert.equal(placed.statusCode, 201, placed.body)
      const etag = placed.headers.etag
      assert.match(String(etag), /^"[A-Za-z0-9_-]{1,64}"$/)
      const order = placed.json<Order>()
      assert.equal((await getOrder(api, order.id)).headers.etag, etag)
      const approved = await patchOrder(api, order.id, { status: 'approved' }, { 'if-match': String(etag) })
      assert.equal(approved.statusCode, 200, approved.body)
      assertError(await patchOrder(api, order.id, { status: 'cancelled' }, { 'if-match': String(etag) }), 'precondition_failed')
    })

    test('When an order is placed with an Idempotency-Key, then the 201 and its replay carry the tag of the order as placed', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const headers = { 'idempotency-key': 'basket-7' }

      const first = await placeOrder(api, { petId: pet.id }, headers)
      const replay = await placeOrder(api, { petId: pet.id }, headers)

      assert.equal(first.statusCode, 201, first.body)
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.headers.etag, first.headers.etag)
      const order = first.json<Order>()
      assert.equal((await getOrder(api, order.id)).headers.etag, first.headers.etag)
      assert.equal((await patchOrder(api, order.id, { status: 'approved' }, { 'if-match': String(first.headers.etag) })).statusCode, 200)
    })
  })
}
