import type { operations } from './generated/openapi.js'
import type { ServiceErrorCode } from './types.js'

/**
 * Codes the client itself gives when the service did not answer with an Error body:
 * - `network_error` (status 0): no answer at all (connection refused or reset, DNS failure,
 *   or no answer within `timeoutMs`), after every retry;
 * - `unexpected_response`: an answer that is not what the API describes, e.g. a proxy's HTML
 *   error page or a success whose body is not the expected JSON (status: the HTTP status).
 */
export type ClientErrorCode = 'network_error' | 'unexpected_response'

/**
 * Every code a {@link PetStoreError} may carry. Open-ended on purpose: the service may add codes
 * (it never renames them), and an older client must still hand them over.
 */
// `string & {}` rather than `string`, so editors still offer the known codes
export type PetStoreErrorCode = ServiceErrorCode | ClientErrorCode | (string & {})

/** The operations of the API, as the OpenAPI document names them (its operation ids). */
export type OperationName = keyof operations

/** What a {@link PetStoreError} is made from. */
export interface PetStoreErrorInit {
  code: PetStoreErrorCode
  /** The HTTP status, or 0 when there was no answer. */
  status: number
  message: string
  operation: OperationName
  /** The `X-Request-Id` of the last attempt. */
  requestId: string | undefined
  /** How many requests were sent (1 + retries). */
  attempts: number
  /** The wait the last answer's `Retry-After` asked for, in milliseconds. */
  retryAfterMs?: number
  cause?: unknown
}

/**
 * The one error every operation throws, for an error answer of the service, an unexpected answer
 * or no answer at all. Branch on `code`; quote `requestId` when reporting a problem (the service
 * logs every request under it).
 */
export class PetStoreError extends Error {
  override readonly name = 'PetStoreError'
  /** The service's `code` (e.g. `invalid_request`, `pet_not_found`), or a {@link ClientErrorCode}. */
  readonly code: PetStoreErrorCode
  /** The HTTP status of the answer; 0 for `network_error`. */
  readonly status: number
  /**
   * The `X-Request-Id` of the last attempt: the one the service answered with, or, when there was
   * no answer, the one the client sent (the service logs it if the request got there).
   */
  readonly requestId: string | undefined
  readonly operation: OperationName
  /** How many requests were sent before giving up. */
  readonly attempts: number
  /** When the last answer carried `Retry-After`: how long it asked to wait, in milliseconds. */
  readonly retryAfterMs: number | undefined

  constructor (init: PetStoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = init.code
    this.status = init.status
    this.requestId = init.requestId
    this.operation = init.operation
    this.attempts = init.attempts
    this.retryAfterMs = init.retryAfterMs
  }
}
