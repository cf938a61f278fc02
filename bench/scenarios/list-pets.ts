import type { LoadScenario } from '../_util/load-scenario.js'
import { LIST_PATH } from '../_util/plan.js'

/** The first page of available pets, over and over: on the service, a page-cache hit. */
export const listPets: LoadScenario = {
  name: 'listPets',
  description: `GET ${LIST_PATH}`,
  requests: () => [{ method: 'GET', path: LIST_PATH }],
  verify: (body) => Array.isArray(body) && body.length === 20 ? undefined : 'expected a page of 20 pets'
}
