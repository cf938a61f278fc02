import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { patchOrder, placedOrder, placeOrder } from './orders-helpers.js'

/** `petstore_http_requests_total` of `operation`, by status, as the registry exports it. */
async function countsByStatus (api: Awaited<ReturnType<typeof buildTestApp>>, operation: string): Promise<Record<string, number>> {
  const text = await api.app.metrics.registry.metrics()
  const counts: Record<string, number> = {}
  for (const line of text.split('\n')) {
    const match = /^petstore_http_requests_total\{(.*)\} (\S+)$/.exec(line)
    if (match === null || !(match[1] ?? '').includes(`operation="${operation}"`)) continue
    const status = /status="(\d+)"/.exec(match[1] ?? '')?.[1] ?? '?'
    counts[status] = Number(match[2])
  }
  return counts
}

for (const store of testStores()) {
  describe(`order metrics (${store})`, () => {
    test('When orders are placed, refused, moved and read, then http_requests_total counts each operation by outcome (its status)', async (t) => {
      const api = await buildTestApp(t, { store })
      const rex = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, Number(rex.id))

      assert.equal((await placeOrder(api, { petId: rex.id })).statusCode, 409)
      assert.equal((await placeOrder(api, { petId: 999_999 })).statusCode, 422)
      assert.equal((await placeOrder(api, { petId: 'x' })).statusCode, 400)
      assert.equal((await patchOrder(api, Number(order.id), { status: 'delivered' })).statusCode, 409)
      assert.equal((await patchOrder(api, Number(order.id), { status: 'cancelled' })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: `/v1/store/orders/${order.id}`, headers: api.auth })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/store/orders/999999', headers: api.auth })).statusCode, 404)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: api.auth })).statusCode, 200)
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: api.auth })).statusCode, 200)

      assert.deepEqual(await countsByStatus(api, 'placeOrder'), { 201: 1, 409: 1, 422: 1, 400: 1 })
      assert.deepEqual(await countsByStatus(api, 'updateOrder'), { 409: 1, 200: 1 })
      assert.deepEqual(await countsByStatus(api, 'getOrder'), { 200: 1, 404: 1 })
      assert.deepEqual(await countsByStatus(api, 'listOrders'), { 200: 1 })
      assert.deepEqual(await countsByStatus(api, 'getInventory'), { 200: 1 })
    })
  })
}
