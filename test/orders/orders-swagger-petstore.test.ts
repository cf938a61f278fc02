import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, testStores } from '../helpers/build-app.js'
import { patchOrder, placeOrder, placedOrder } from './orders-helpers.js'

// what docs/swagger-petstore.md tells a swagger-petstore client: each claim of the page, held here
for (const store of testStores()) {
  describe(`a swagger-petstore client's store calls (${store})`, () => {
    test('When swagger-petstore\'s order fields are sent, then 400 names each, and nothing is placed', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })

      for (const field of ['quantity', 'shipDate', 'complete', 'status', 'id']) {
        const value = { quantity: 1, shipDate: '2026-11-25T09:31:12.500Z', complete: false, status: 'placed', id: 10 }[field]
        assertError(await placeOrder(api, { petId: pet.id, [field]: value }), 'invalid_request', `"${field}"`)
      }

      assert.equal((await getPet(api, pet.id)).json<{ status: string }>().status, 'available')
    })

    test('When swagger-petstore\'s paths are called, then /store/order is 404 and DELETE of an order is 405; cancelling frees the pet and keeps the order', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)

      assertError(await api.app.inject({ method: 'GET', url: `/v1/store/order/${order.id}`, headers: api.auth }), 'not_found')
      const deleted = await api.app.inject({ method: 'DELETE', url: `/v1/store/orders/${order.id}`, headers: api.auth })
      assertError(deleted, 'method_not_allowed')
      assert.match(String(deleted.headers.allow), /PATCH/)

      const cancelled = await patchOrder(api, order.id, { status: 'cancelled', cancellationReason: 'Ordered by mistake.' })
      assert.equal(cancelled.statusCode, 200, cancelled.body)
      assert.equal(cancelled.json<Order>().status, 'cancelled')
      assert.equal((await getPet(api, pet.id)).json<{ status: string }>().status, 'available')
      assert.equal((await api.app.inject({ method: 'GET', url: `/v1/store/orders/${order.id}`, headers: api.auth })).statusCode, 200)
    })
  })
}
