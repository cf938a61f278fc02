import type { LoadRequest } from '../../tools/harness/load-spec.js'
import type { Role } from './servers.js'
import type { StoreFacts } from './stores.js'

/** A load the three servers (bare, peer, service) take in turn on one store. */
export interface LoadScenario {
  /** Its name in the report: the operation it loads, e.g. `listPets`. */
  name: string
  /** What it sends, in a few words. */
  description: string
  /** What `role` is sent (the bare baseline answers anything, so it takes the service's requests). */
  requests: (role: Role, facts: StoreFacts) => LoadRequest[]
  /** Why an answer of the first request, checked by hand before the load, is not the expected one; undefined when it is. */
  verify?: (body: unknown) => string | undefined
}
