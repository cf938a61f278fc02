import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Order } from '@petstore/client'
import { testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startService } from '../helpers/client-service.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

for (const store of testStores()) {
  describe(`@petstore/client orders against the live service (${store})`, () => {
    test('When an order is placed, then the pet is pending, the order is listed and fetched with the ETag the service sends, and the inventory counts it', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Bella', categoryId: 1, status: 'sold' })

      const order = await client.placeOrder({ petId: rex.id })
      const page = await client.listOrders({ petId: rex.id })
      const fetched = await client.getOrder(order.id)
      const inventory = await client.getInventory()

      assert.deepEqual(order, { id: order.id, petId: rex.id, status: 'placed', placedAt: order.placedAt, metadata: {} })
      assert.deepEqual(page, { orders: [order] })
      assert.deepEqual(fetched.order, order)
      const read = await service.app.inject({ method: 'GET', url: `/v1/store/orders/${order.id}`, headers: service.auth })
      assert.equal(fetched.etag, read.headers.etag)
      assert.deepEqual(inventory, { available: 0, pending: 1, sold: 1 })
      assert.equal((await client.listPets({ status: 'pending' })).pets[0]?.id, rex.id)
    })

    test('When placeOrder is called, then it sends a fresh Idempotency-Key unless given one, and a repeated key places nothing more', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      const bella = await client.createPet({ name: 'Bella', categoryId: 1 })

      await client.placeOrder({ petId: rex.id })
      const chosen = await client.placeOrder({ petId: bella.id }, { idempotencyKey: 'basket-42' })
      const repeated = await client.placeOrder({ petId: bella.id }, { idempotencyKey: 'basket-42' })

      const keys = service.served.filter((r) => r.method === 'POST' && r.url.includes('/store/orders')).map((r) => r.idempotencyKey)
      assert.match(String(keys[0]), UUID)
      assert.deepEqual(keys.slice(1), ['basket-42', 'basket-42'])
      assert.deepEqual(repeated, chosen)
      assert.equal(service.served.at(-1)?.replayed, true)
      assert.equal((await client.listOrders()).orders.length, 2)
    })

    test('When an order is moved with the current ETag, then it changes; a stale tag fails with precondition_failed, 412, without a retry', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      const order = await client.placeOrder({ petId: rex.id })
      const { etag } = await client.getOrder(order.id)

      const approved = await client.updateOrder(order.id, { status: 'approved' }, { ifMatch: etag })
      const error = await petStoreError(() => client.updateOrder(order.id, { status: 'cancelled' }, { ifMatch: etag }))
      const delivered = await client.updateOrder(order.id, { status: 'delivered' }, { ifMatch: approved.etag })

      assert.deepEqual(approved.order, { ...order, status: 'approved', approvedAt: approved.order.approvedAt })
      assert.notEqual(approved.etag, etag)
      assert.equal(error.code, 'precondition_failed')
      assert.equal(error.status, 412)
      assert.equal(error.operation, 'updateOrder')
      assert.equal(error.attempts, 1)
      assert.deepEqual(delivered.order, { ...approved.order, status: 'delivered', deliveredAt: delivered.order.deliveredAt })
      assert.equal(delivered.etag, (await client.getOrder(order.id)).etag)
      assert.deepEqual(await client.getInventory(), { available: 0, pending: 0, sold: 1 })
    })

    test('When an order is placed with metadata, then updateOrder merges it and a cancellation keeps its reason and time, all typed', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })

      const order: Order = await client.placeOrder({ petId: rex.id, metadata: { channel: 'web', coupon: 'X1' } })
      const merged = await client.updateOrder(order.id, { metadata: { coupon: null, gift: 'yes' } })
      const cancelled = await client.updateOrder(order.id, { status: 'cancelled', cancellationReason: 'Changed their mind.' }, { ifMatch: merged.etag })

      assert.deepEqual(order.metadata, { channel: 'web', coupon: 'X1' })
      assert.deepEqual(merged.order.metadata, { channel: 'web', gift: 'yes' })
      const { cancelledAt, cancellationReason }: Pick<Order, 'cancelledAt' | 'cancellationReason'> = cancelled.order
      assert.equal(cancellationReason, 'Changed their mind.')
      assert.ok(Date.parse(cancelledAt ?? '') >= Date.parse(order.placedAt))
      assert.equal(cancelled.order.approvedAt, undefined)
    })

    test('When an order cannot be placed or moved, then PetStoreError names the code and status, and nothing changed', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      const order = await client.placeOrder({ petId: rex.id })
      await client.updateOrder(order.id, { status: 'cancelled' })

      const taken = await client.placeOrder({ petId: rex.id })
      const twice = await petStoreError(() => client.placeOrder({ petId: rex.id }))
      const missing = await petStoreError(() => client.placeOrder({ petId: 999_999 }))
      const final = await petStoreError(() => client.updateOrder(order.id, { status: 'approved' }))
      const unknown = await petStoreError(() => client.getOrder(999_999))

      assert.deepEqual([twice.code, twice.status, twice.operation, twice.attempts], ['pet_not_available', 409, 'placeOrder', 1])
      assert.deepEqual([missing.code, missing.status], ['pet_not_found', 422])
      assert.deepEqual([final.code, final.status, final.attempts], ['invalid_transition', 409, 1])
      assert.deepEqual([unknown.code, unknown.status, unknown.operation], ['order_not_found', 404, 'getOrder'])
      assert.deepEqual((await client.listOrders()).orders.map((o) => [o.id, o.status]), [[order.id, 'cancelled'], [taken.id, 'placed']])
    })

    test('When there are more orders than the page size, then orders.all yields every one, with the filters, page after page', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const placed: Order[] = []
      for (let i = 1; i <= 5; i++) {
        const pet = await client.createPet({ name: `Pet ${i}`, categoryId: 1 })
        placed.push(await client.placeOrder({ petId: pet.id }))
      }
      const cancelled = [placed[1], placed[3]].filter((o) => o !== undefined)
      for (const o of cancelled) await client.updateOrder(o.id, { status: 'cancelled' })

      const all: Order[] = []
      for await (const o of client.orders.all({ limit: 2 })) all.push(o)
      const onlyCancelled: Order[] = []
      for await (const o of client.orders.all({ limit: 1, status: 'cancelled' })) onlyCancelled.push(o)
      const first = await client.listOrders({ limit: 2 })

      assert.deepEqual(all.map((o) => o.id), placed.map((o) => o.id))
      assert.deepEqual(onlyCancelled.map((o) => [o.id, o.status]), cancelled.map((o) => [o.id, 'cancelled']))
      assert.equal(typeof first.nextCursor, 'string')
      assert.deepEqual((await client.listOrders({ limit: 2, cursor: first.nextCursor })).orders.map((o) => o.id), placed.slice(2, 4).map((o) => o.id))
    })
  })
}
