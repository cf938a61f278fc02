/**
 * The one catalogue of error codes: each has its HTTP status and a default message. The codes every part of the
 * service answers with are here; a capability declares its own beside its routes ({@link declareErrors}), and
 * they join the catalogue when its module loads, before any app is built.
 * Codes are stable API: clients branch on them, so add new ones, never rename.
 * This module imports nothing else of the project, so every layer (the store included) may use it.
 */
export const ERRORS = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_cursor: { status: 400, message: 'The cursor is not one this service issued for this query.' },
  unauthorized: { status: 401, message: 'A valid API key is required: send "Authorization: Bearer <API key>".' },
  insufficient_scope: { status: 403, message: 'This API key may not call this operation: its role is below the one the operation needs.' },
  // 422 when the pet is named in a body (placeOrder) rather than in the path
  pet_not_found: { status: 404, message: 'No pet has this id.', alsoStatuses: [422] },
  order_not_found: { status: 404, message: 'No order has this id.' },
  // 422 when the event is named in a body (resend) rather than in the path
  event_not_found: { status: 404, message: 'No event has this id.', alsoStatuses: [422] },
  not_found: { status: 404, message: 'No such resource.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this resource.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  idempotency_request_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed; retry after it finishes.' },
  invalid_transition: { status: 409, message: 'The pet or order cannot move from its current status to the one asked for.' },
  pet_not_available: { status: 409, message: 'The pet is not available, so it cannot be ordered.' },
  pet_has_open_order: { status: 409, message: 'The pet has an open order, which decides its status.' },
  gone: { status: 410, message: 'This operation has been removed.' },
  events_expired: { status: 410, message: 'Events after this id are no longer retained; resynchronize, then follow the feed from a retained id.' },
  precondition_failed: { status: 412, message: 'If-Match does not match the current ETag of the resource; it was changed since it was read.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'The request body must be application/json.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was already used with a different request body.' },
  rate_limited: { status: 429, message: 'Too many requests; retry after the time given in Retry-After.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'An unexpected error occurred; it has been logged.' },
  not_implemented: { status: 501, message: 'This operation is not implemented.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable; retry shortly.' },
  overloaded: { status: 503, message: 'This instance is overloaded and turned the request away unread; retry after Retry-After seconds.' }
} as const satisfies Record<string, ErrorDefinition>

/** One error code's HTTP status, its default message, and any other status it may be answered with. */
export interface ErrorDefinition {
  status: number
  message: string
  alsoStatuses?: readonly number[]
}

/**
 * The codes capabilities declare with {@link declareErrors}, by name: each capability adds its own to this
 * interface (`declare module` beside its declaration), so {@link ApiError} and the tests take them as they take
 * the shared ones.
 */
export interface DeclaredErrorCodes {}

export type ErrorCode = keyof (typeof ERRORS & DeclaredErrorCodes)

const definitions = new Map<string, ErrorDefinition>(Object.entries(ERRORS))

/**
 * Every code, in catalogue order, the declared ones after the shared ones (the `code` enum of the Error schema).
 * The same array throughout: a declaration adds to it.
 */
export const ERROR_CODES: readonly ErrorCode[] = Object.keys(ERRORS) as ErrorCode[]

/**
 * Adds a capability's own codes to the catalogue (at its module's load, so before any app is built and any
 * document is written); returns them, for the capability's routes and tests. A code declared twice throws.
 */
export function declareErrors<const T extends Readonly<Record<string, ErrorDefinition>>> (errors: T): T {
  for (const [code, definition] of Object.entries(errors)) {
    if (definitions.has(code)) throw new Error(`error code ${code} is declared twice`)
    definitions.set(code, definition)
    ;(ERROR_CODES as ErrorCode[]).push(code as ErrorCode)
  }
  return errors
}

/** The definition of `code`: its status and default message. */
export function errorDefinition (code: ErrorCode): ErrorDefinition {
  const definition = definitions.get(code)
  if (definition === undefined) throw new Error(`error code ${code} is not in the catalogue: its capability's module declares it`)
  return definition
}

/** The statuses an answer with `code` may have: its own, then any other the catalogue allows it. */
export function statusesOf (code: ErrorCode): readonly number[] {
  const entry = errorDefinition(code)
  return [entry.status, ...(entry.alsoStatuses ?? [])]
}

/** Sent as `Retry-After` with every 503 (and 409 in-progress): the wait is usually brief, and clients that honour it spread their retries. */
export const RETRY_AFTER_SECONDS = 1

/** Longest error message sent: a message may quote what the client sent (a field's name), so it is cut there. */
export const ERROR_MESSAGE_MAX_LENGTH = 1000

/** The message as sent: cut to {@link ERROR_MESSAGE_MAX_LENGTH} characters (code points), ending in "…" when cut. */
function boundedMessage (message: string): string {
  const characters = [...message]
  return characters.length <= ERROR_MESSAGE_MAX_LENGTH ? message : characters.slice(0, ERROR_MESSAGE_MAX_LENGTH - 1).join('') + '…'
}

/** An error meant for the client: its code, status and message go out as they are (the message bounded). */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Readonly<Record<string, string>>

  /** `status`: one of {@link statusesOf} `code` other than its own, where the catalogue allows one. */
  constructor (code: ErrorCode, message?: string, headers: Record<string, string> = {}, status?: number) {
    super(boundedMessage(message ?? errorDefinition(code).message))
    this.name = 'ApiError'
    this.code = code
    if (status !== undefined && !statusesOf(code).includes(status)) throw new Error(`${code} is never a ${status}`)
    this.status = status ?? errorDefinition(code).status
    this.headers = this.status === 503 ? { 'retry-after': String(RETRY_AFTER_SECONDS), ...headers } : headers
  }
}

/** The store cannot be reached or is not ready; the request may be retried. */
export class StoreUnavailableError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}
