import { createHash } from 'node:crypto'
import { ApiError } from '../../infra/errors/catalogue.js'
import { stringifyJson } from '../../infra/json/exact-json.js'
import { CreatePetHeadersSchema, IDEMPOTENCY_KEY_PATTERN } from '../../infra/schemas/headers.js'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import type { NewPetRecord } from '../pets/store/pet-store.js'

const VALID_HEADER = new RegExp(IDEMPOTENCY_KEY_PATTERN)
const WHAT_IS_VALID = CreatePetHeadersSchema.properties['idempotency-key'][PATTERN_DESCRIPTION_KEYWORD] as string

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
 * The same pet asked for twice gives the same fingerprint, whatever the key order or spacing; a category id
 * beyond 2^53 is written digit for digit, so 2^53 + 1 and 2^53 + 2 differ (and an ordinary pet's fingerprint
 * is what it was before int64 values were exact).
 */
export function fingerprintOf (pet: NewPetRecord): string {
  return createHash('sha256').update(stringifyJson([pet.name, pet.categoryId, pet.status])).digest('base64url')
}
