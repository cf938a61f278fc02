import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { stringifyJson } from '../../src/infra/json/exact-json.js'
import type { TestApp } from '../helpers/build-app.js'

/** POSTs `body` (bigints written digit for digit) to /v1/store/orders. */
export async function placeOrder (api: TestApp, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await api.app.inject({
    method: 'POST',
    url: '/v1/store/orders',
    headers: { ...api.auth, 'content-type': 'application/json', ...headers },
    payload: stringifyJson(body)
  })
}

/** Places an order for the pet and returns it (fails on any answer but 201). */
export async function placedOrder (api: TestApp, petId: number): Promise<Order> {
  const res = await placeOrder(api, { petId })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** PATCHes `body` to /v1/store/orders/{orderId} as a JSON Merge Patch. */
export async function patchOrder (api: TestApp, orderId: number, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await api.app.inject({
    method: 'PATCH',
    url: `/v1/store/orders/${orderId}`,
    headers: { ...api.auth, 'content-type': 'application/merge-patch+json', ...headers },
    payload: JSON.stringify(body)
  })
}
