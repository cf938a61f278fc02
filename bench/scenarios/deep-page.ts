import type { LoadScenario } from '../_util/load-scenario.js'
import { LIST_PATH } from '../_util/plan.js'

/** A page 40 available pets before the end of the store: keyset paging costs what the first page does. */
export const deepPage: LoadScenario = {
  name: 'listPets, deep page',
  description: `GET ${LIST_PATH}&cursor=… (40 available pets before the end)`,
  // the peer's cursor is the last id seen; the service's is signed with the store's secret
  requests: (role, facts) => [{
    method: 'GET',
    path: `${LIST_PATH}&cursor=${role === 'peer' ? String(facts.deepAfterId) : encodeURIComponent(facts.deepServiceCursor)}`
  }],
  verify: (body) => Array.isArray(body) && body.length === 20 ? undefined : 'expected a full page of 20 pets'
}
