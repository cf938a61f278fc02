import type { LoadRequest } from '../../tools/harness/load-spec.js'
import type { Role } from './servers.js'
import type { StoreFacts } from './stores.js'

/** A load the servers (bare, peer, the contract-equal peer, service) take in turn on one store. */
export interface LoadScenario {
  /** Its name in the report: the operation it loads, e.g. `listPets`. */
  name: string
  /** What it sends, in a few words. */
  description: string
  /**
   * What `role` is sent (the bare baseline answers anything, so it takes the service's requests). Called once per
   * server and scenario: a counting body's ids are drawn, run after run, from the sequence it makes.
   */
  requests: (role: Role, facts: StoreFacts) => LoadRequest[]
  /** Why an answer of the first request, checked by hand before the load, is not the expected one; undefined when it is. */
  verify?: (body: unknown) => string | undefined
  /**
   * True when a single non-2xx answer means the load measured something else than its name (placeOrder: a pet
   * ordered already answers 409): then the scenario fails instead of counting it as an answer.
   */
  every2xx?: boolean
  /** False for a scenario the contract-equal peer does not serve (placeOrder): it is then left out of its rounds. */
  contractPeer?: false
}
