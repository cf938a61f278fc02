/** What a create with an `Idempotency-Key` asks the store for before it does anything. */
export interface IdempotencyClaimRequest {
  /** Whose key it is: one API key's records never meet another's. */
  scope: string
  key: string
  /** Hash of the request body: the same key with another body is refused. */
  fingerprint: string
  /** Random; marks the claim, so only its holder can complete or release it. */
  token: string
  now: Date
  /** A claim still in flight after this long was abandoned (its process died) and may be taken over. */
  leaseMs: number
  /** How long the record is kept after it is claimed. */
  ttlMs: number
}

/** A completed create's answer, replayed to a repeat. */
export interface StoredResponse {
  status: number
  /** The body as JSON text. */
  body: string
}

export type IdempotencyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'in_flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'completed', response: StoredResponse }

/** The claim whose holder now completes it. */
export interface IdempotencyCompletion {
  scope: string
  key: string
  token: string
}

/** A row of idempotency_keys, as both engines read it (times in ms since the epoch). */
export interface IdempotencyRow {
  fingerprint: string
  token: string | null
  lockedUntilMs: number | null
  responseStatus: number | null
  responseBody: string | null
  expiresAtMs: number
}

/** What to do with an existing row, or the answer to give. */
export type ClaimDecision = { action: 'take_over' } | { action: 'answer', claim: IdempotencyClaim }

/**
 * The one rule for a key that already has a record, shared by both stores: an expired record
 * or an abandoned claim (whatever its body) is taken over; otherwise another body is a mismatch,
 * a claim still held is in flight, and a completed record is replayed.
 */
export function decideClaim (row: IdempotencyRow, request: IdempotencyClaimRequest): ClaimDecision {
  const now = request.now.getTime()
  if (row.expiresAtMs <= now) return { action: 'take_over' }
  // nothing was ever stored under an abandoned claim, so whatever the body, the key is free again
  if (row.token !== null && (row.lockedUntilMs ?? 0) <= now) return { action: 'take_over' }
  if (row.fingerprint !== request.fingerprint) return { action: 'answer', claim: { outcome: 'mismatch' } }
  if (row.token !== null) return { action: 'answer', claim: { outcome: 'in_flight' } }
  if (row.responseStatus === null || row.responseBody === null) return { action: 'take_over' }
  return { action: 'answer', claim: { outcome: 'completed', response: { status: row.responseStatus, body: row.responseBody } } }
}

/** The claim was taken over by another request (this one outlived its lease); nothing was written. */
export class IdempotencyClaimLostError extends Error {
  constructor () {
    super('the idempotency claim was taken over by another request')
    this.name = 'IdempotencyClaimLostError'
  }
}
