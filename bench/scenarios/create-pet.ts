import type { LoadScenario } from '../_util/load-scenario.js'
import { CREATE_BODY } from '../_util/plan.js'

/** Durable creates (each 201 after its commit), without Idempotency-Key. */
export const createPet: LoadScenario = {
  name: 'createPet',
  description: 'POST /v1/pets, durable',
  requests: () => [{ method: 'POST', path: '/v1/pets', body: CREATE_BODY }]
}
