import { createHash } from 'node:crypto'
import { ApiError } from '../../infra/errors/catalogue.js'
import { stringifyJson } from '../../infra/json/exact-json.js'
import { IDEMPOTENCY_KEY_DESCRIPTION, IDEMPOTENCY_KEY_PATTERN } from './idempotency-header.js'

const VALID_HEADER = new RegExp(IDEMPOTENCY_KEY_PATTERN)
const WHAT_IS_VALID = IDEMPOTENCY_KEY_DESCRIPTION

/**
 * Reads the key out of an `Idempotency-Key` header: the IETF draft's structured-field string
 * (`"…"`) or, as most clients send it, the bare token. Validation has checked the header against
 * the schema's pattern; the same pattern is checked here, so a caller without it gets the same
 * 400. Undefined when absent.
 */
export function parseIdempotencyKey (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (Array.isArray(header)) throw new ApiError('invalid_request', 'header "Idempotency-Key" must be sent once')
  if (!VALID_HEADER.test(header)) throw new ApiError('invalid_request', `header "idempotency-key" must be ${WHAT_IS_VALID}`)
  return header.startsWith('"') ? header.slice(1, -1) : header
}

/**
 * A request body's fingerprint from the values that make it what it is, in a fixed order (so key order
 * and spacing do not matter): the same key with another fingerprint is refused. Numbers beyond 2^53 are
 * written digit for digit, so 2^53 + 1 and 2^53 + 2 differ.
 */
export function fingerprintOf (values: readonly unknown[]): string {
  return createHash('sha256').update(stringifyJson(values)).digest('base64url')
}
