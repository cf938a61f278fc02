import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

import { API_KEY_PREFIX, API_KEY_RANDOM_BYTES, B64TOKEN } from '../../infra/credentials/credentials.js'

export { API_KEY_PREFIX, BEARER_TOKEN, ISSUED_API_KEY } from '../../infra/credentials/credentials.js'

/** A new random key: 256 bits, base64url, safe to use as a bearer token as it is. */
export function generateApiKey (): string {
  return API_KEY_PREFIX + randomBytes(API_KEY_RANDOM_BYTES).toString('base64url')
}

/** The SHA-256 of a key, hex: the only form in which a key is stored. */
export function hashApiKey (key: string): string {
  // one-shot: it runs on every request
  return hash('sha256', key, 'hex')
}

/** The SHA-256 of a key, as bytes: what a request's key is compared by. */
export function digestApiKey (key: string): Buffer {
  // from the hex (a pooled Buffer): asking for a Buffer output allocates a backing store of its own each time
  return Buffer.from(hashApiKey(key), 'hex')
}

/**
 * The entry whose `digest` equals `digest`, in time that does not depend on which entry it is or
 * where the others differ: every entry is compared.
 */
export function findDigestInConstantTime<E extends { digest: Buffer }> (entries: readonly E[], digest: Buffer): E | undefined {
  let found: E | undefined
  for (const entry of entries) {
    // no early exit: the time does not tell which one matched
    if (timingSafeEqual(entry.digest, digest)) found = entry
  }
  return found
}

export type BearerParseResult =
  | { ok: true, token: string }
  | { ok: false, reason: 'missing' | 'malformed' }

// credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive
const BEARER = new RegExp(`^bearer +(${B64TOKEN}) *$`, 'i')

/** Extracts the token of an `Authorization: Bearer <token>` header. */
export function parseBearer (header: string | undefined): BearerParseResult {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' }
  const match = BEARER.exec(header)
  return match === null ? { ok: false, reason: 'malformed' } : { ok: true, token: match[1] as string }
}
