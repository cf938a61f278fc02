import { IdSequence } from '../../tools/harness/id-sequence.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import type { LoadScenario } from '../_util/load-scenario.js'
import { ORDER_BODY } from '../_util/plan.js'
import type { IdRange } from '../_util/stores.js'

/** Orders placed on each build before updateOrder's load: it patches one of them at random, so two connections seldom patch one at once. */
export const ORDERS_TO_UPDATE = 1000
/** updateOrder's body around a number drawn once per request: each patch changes the order's metadata, so each is a real update. */
export const UPDATE_BODY = { before: '{"metadata":{"bench":"', after: '"}}' } as const
// placements sent at once while the orders are placed (before the load, not measured)
const PLACING_CONCURRENCY = 10

/**
 * Places {@link ORDERS_TO_UPDATE} orders on `server` through its API (each 201, durable), for the last pets of
 * `pets`, the block placeOrder orders from its first pet on; returns the range of their ids.
 */
export async function placeOrdersToUpdate (server: ServerProcess, headers: Readonly<Record<string, string>>, pets: IdRange): Promise<IdRange> {
  const [first, last] = pets
  if (last - first + 1 < ORDERS_TO_UPDATE) throw new Error(`updateOrder needs ${ORDERS_TO_UPDATE} orderable pets, the block has ${last - first + 1}`)
  const ids: number[] = []
  const place = async (petId: number): Promise<void> => {
    const res = await fetch(`${server.baseUrl}/v1/store/orders`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: `${ORDER_BODY.before}${petId}${ORDER_BODY.after}`,
      signal: AbortSignal.timeout(30_000)
    })
    const text = await res.text()
    if (res.status !== 201) throw new Error(`${server.label}: placing the order of pet ${petId} to update answered ${res.status}: ${text.slice(0, 300)}`)
    ids.push((JSON.parse(text) as { id: number }).id)
  }
  for (let petId = last - ORDERS_TO_UPDATE + 1; petId <= last; petId += PLACING_CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(PLACING_CONCURRENCY, last - petId + 1) }, async (_, i) => { await place(petId + i) }))
  }
  ids.sort((a, b) => a - b)
  const [low, high] = [ids[0] as number, ids.at(-1) as number]
  // the load draws ids from the range: every one of them must be an order placed here
  if (high - low + 1 !== ids.length) throw new Error(`${server.label}: the orders placed to update have ids ${low}..${high} with gaps`)
  return [low, high]
}

/**
 * Durable updates of placed orders (each 200 after its commit, `order.updated` recorded): a JSON Merge Patch of
 * the order's metadata, a new value each time, on one of the orders {@link placeOrdersToUpdate} placed before the
 * load, drawn at random. Not a status move: an order moves at most twice (placed → approved → delivered), so a
 * load of moves would need an order per two requests; the route, its If-Match-less read-modify-write, the event
 * and the commit are the same.
 */
export const updateOrder: LoadScenario = {
  name: 'updateOrder',
  description: `PATCH /v1/store/orders/<one of ${ORDERS_TO_UPDATE} placed orders, at random> {"metadata":{"bench":"<n>"}}, durable`,
  requests: (_role, facts) => {
    const orders = facts.ordersToUpdate
    if (orders === undefined) throw new Error('updateOrder needs orders placed before its load (placeOrdersToUpdate, as bench/ab.ts does)')
    return [{ method: 'PATCH', path: '/v1/store/orders/', randomIdRange: orders, countingBody: { ...UPDATE_BODY, ids: new IdSequence(1, Number.MAX_SAFE_INTEGER) } }]
  },
  every2xx: true
}

/**
 * updateOrder's whole path with nothing to write: `{"status":"placed"}` on a placed order (keeping its status is
 * always allowed, and a store writes only a change). Every build that has updateOrder answers it 200, so it A/Bs
 * the route, the validation and the locked read against builds from before orders had metadata.
 */
export const updateOrderUnchanged: LoadScenario = {
  name: 'updateOrderUnchanged',
  description: `PATCH /v1/store/orders/<one of ${ORDERS_TO_UPDATE} placed orders, at random> {"status":"placed"}: nothing changes`,
  requests: (_role, facts) => {
    const orders = facts.ordersToUpdate
    if (orders === undefined) throw new Error('updateOrderUnchanged needs orders placed before its load (placeOrdersToUpdate, as bench/ab.ts does)')
    return [{ method: 'PATCH', path: '/v1/store/orders/', randomIdRange: orders, body: '{"status":"placed"}' }]
  },
  every2xx: true
}
