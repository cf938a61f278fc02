import { Counter, type Registry } from 'prom-client'
import { TallyCounter } from '../../infra/metrics/tally.js'
import { PET_STATUSES } from './pet-schemas.js'
import { STATUS_TRANSITIONS } from './status-transitions.js'

/** The pets' metrics, declared by the capability and registered in the app's registry. */
export class PetMetrics {
  /** Status changes made by updatePet, each transition's series from the start at 0 (a rate() sees the first one). */
  readonly transitions: Counter<'from' | 'to'>
  /** Calls of the deprecated getPet: counted on every request, so a tally (summed only when scraped). */
  readonly deprecatedCalls: TallyCounter<'operation' | 'api_key' | 'role'>

  constructor (registry: Registry) {
    this.transitions = new Counter({
      name: 'petstore_pet_transitions_total',
      help: 'Pet status changes made by updatePet, by the status before (from) and after (to); a change that keeps the status is not counted.',
      labelNames: ['from', 'to'] as const,
      registers: [registry]
    })
    this.deprecatedCalls = new TallyCounter({
      name: 'petstore_deprecated_operation_calls_total',
      help: 'Authenticated calls of deprecated operations, by operation, API key name and role: who still calls them before the sunset.',
      labelNames: ['operation', 'api_key', 'role'] as const,
      registers: [registry]
    })
    for (const from of PET_STATUSES) for (const to of STATUS_TRANSITIONS[from]) this.transitions.inc({ from, to }, 0)
  }
}
