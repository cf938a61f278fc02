import { deprecatedOperations } from './generated/openapi.js'
import { findLink } from './link-header.js'

/** `getPet`'s removal date, as the OpenAPI document gives it (`x-deprecated-sunset`); an answer's `Sunset` header wins. */
const GET_PET_SUNSET = new Date(`${deprecatedOperations.getPet.sunset}T00:00:00Z`)

/**
 * Emitted once per client, on the first answer to a deprecated operation. Its `name` is
 * `DeprecationWarning`, so Node prints it like its own and `--no-deprecation` silences it.
 */
export class PetStoreDeprecationWarning extends Error {
  override readonly name = 'DeprecationWarning'
  /** Stable code, for filtering: `PETSTORE_DEPRECATED_OPERATION`. */
  readonly code = 'PETSTORE_DEPRECATED_OPERATION'
  /** The deprecated operation. */
  readonly operation: string
  /** When the operation is removed (after which the service answers 410 `gone`). */
  readonly sunset: Date
  /** What to use instead: the answer's `successor-version` link, when it carried one. */
  readonly successor: string | undefined

  constructor (operation: string, sunset: Date, successor: string | undefined, advice: string) {
    super(`${operation} is deprecated and will be removed on ${sunset.toISOString().slice(0, 10)}, after which it fails with 410 gone. ${advice}`)
    this.operation = operation
    this.sunset = sunset
    this.successor = successor
  }
}

/** The warning for `getPet`, with the sunset and successor the answer names (its `Sunset` and `Link` headers). */
export function getPetDeprecationWarning (response: Response): PetStoreDeprecationWarning {
  const sunsetHeader = Date.parse(response.headers.get('sunset') ?? '')
  const sunset = Number.isNaN(sunsetHeader) ? GET_PET_SUNSET : new Date(sunsetHeader)
  const successor = findLink(response.headers.get('link'), 'successor-version', response.url)?.href
  return new PetStoreDeprecationWarning('getPet (GET /pets/{petId})', sunset, successor,
    `Use listPets with the status filter instead${successor === undefined ? '' : ` (${successor})`}.`)
}

/** Node's warning channel (printed on stderr once per warning); console.warn where there is no `process`. */
export function emitProcessWarning (warning: Error): void {
  if (typeof process !== 'undefined' && typeof process.emitWarning === 'function') process.emitWarning(warning)
  else console.warn(warning.message)
}
