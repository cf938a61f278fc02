import { IdSequence } from '../../tools/harness/id-sequence.js'
import type { LoadScenario } from '../_util/load-scenario.js'
import { ORDER_BODY } from '../_util/plan.js'

/**
 * Durable orders (each 201 after its commit), without Idempotency-Key, each for another available pet: the
 * peer and the service order, one by one, the pets of their own block (a pet ordered already would answer 409);
 * the bare baseline, which stores nothing, is sent the service's ids.
 */
export const placeOrder: LoadScenario = {
  name: 'placeOrder',
  description: 'POST /v1/store/orders {"petId": <the next pet of the server\'s block>}, durable',
  requests: (role, facts) => {
    const block = facts.orderable[role === 'bare' ? 'service' : role]
    if (block === undefined) throw new Error(`the store has no block of pets for the ${role === 'bare' ? 'service' : role} to order`)
    const ids = role === 'bare'
      ? new IdSequence(block[0], Number.MAX_SAFE_INTEGER)
      : new IdSequence(block[0], block[1], `the ${role} ordered every pet of its block: raise ORDER_RATE_CEILING (bench/_util/plan.ts)`)
    return [{ method: 'POST', path: '/v1/store/orders', countingBody: { ...ORDER_BODY, ids } }]
  },
  every2xx: true,
  // the contract-equal peer serves the pets' operations and getInventory only
  contractPeer: false
}
