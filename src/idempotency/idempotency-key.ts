import { createHash } from 'node:crypto'
import { ApiError } from '../errors/catalogue.js'
import type { NewPetRecord } from '../store/pet-store.js'
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './policy.js'

// visible ASCII without quote and backslash: a UUID, a ULID or any random token fits
const KEY_CHARACTERS = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/**
 * Reads an `Idempotency-Key` header: the IETF draft's structured-field string (`"…"`) or, as
 * most clients send it, the bare token. Undefined when absent; a 400 naming the header otherwise.
 */
export function parseIdempotencyKey (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (Array.isArray(header)) throw new ApiError('invalid_request', 'header "Idempotency-Key" must be sent once')
  const quoted = /^"(.*)"$/.exec(header)
  const key = quoted?.[1] ?? header
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !KEY_CHARACTERS.test(key)) {
    throw new ApiError('invalid_request',
      `header "Idempotency-Key" must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes (e.g. a UUID), optionally in double quotes`)
  }
  return key
}

/** The same pet asked for twice gives the same fingerprint, whatever the key order or spacing. */
export function fingerprintOf (pet: NewPetRecord): string {
  return createHash('sha256').update(JSON.stringify([pet.name, pet.categoryId, pet.status])).digest('base64url')
}
