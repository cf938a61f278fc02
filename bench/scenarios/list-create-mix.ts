import type { LoadRequest } from '../../tools/harness/load-spec.js'
import type { LoadScenario } from '../_util/load-scenario.js'
import { CREATE_BODY, LIST_PATH } from '../_util/plan.js'

/** Nine lists, then one create, in turn: every create changes what the next lists read. */
export const listCreateMix: LoadScenario = {
  name: '90/10 listPets/createPet',
  description: `9 × GET ${LIST_PATH}, then 1 × POST /v1/pets`,
  requests: () => [
    ...Array.from({ length: 9 }, (): LoadRequest => ({ method: 'GET', path: LIST_PATH })),
    { method: 'POST', path: '/v1/pets', body: CREATE_BODY }
  ]
}
