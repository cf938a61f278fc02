import type { IdempotencyClaim, IdempotencyClaimRequest, IdempotencyCompletion } from '../claims.js'

/**
 * The Idempotency-Key records as stored. A claim is completed by the store of the operation it
 * guards, in that operation's own transaction ({@link COMPLETE_CLAIM_SQL}), so the resource and its
 * record exist together or not at all.
 */
export interface IdempotencyStore {
  /** Claims an Idempotency-Key for a request, or says why not (atomic across instances). */
  claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim>
  /** Drops a claim still in flight (its request failed), so a retry runs afresh. */
  releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void>
  /** Deletes records that expired before `now`; returns how many. */
  deleteExpiredIdempotencyKeys (now: Date): Promise<number>
}

/**
 * What `restore` runs on a SQLite backup before it takes the database's place: a claim still in flight in the
 * backup belonged to a request of the replaced database, which will never complete it here. Nothing was stored
 * under it, so the key is free again at once instead of answering 409 until the lease (60 s) runs out.
 */
export const RELEASE_HELD_CLAIMS_SQLITE = 'DELETE FROM idempotency_keys WHERE token IS NOT NULL'

/**
 * How a guarded operation completes its claim inside its own transaction, per engine. SQLite: status,
 * body, scope, key, token. PostgreSQL: arrays of scope, key, token and body (201 each), for a batch;
 * it returns the claims it completed, so the caller finds those it no longer held.
 */
export const COMPLETE_CLAIM_SQL = {
  sqlite: 'UPDATE idempotency_keys SET token = NULL, locked_until = NULL, response_status = ?, response_body = ? WHERE scope = ? AND key = ? AND token = ?',
  postgres: {
    name: 'petstore-complete-idempotency-keys',
    text: 'UPDATE idempotency_keys AS k SET token = NULL, locked_until = NULL, response_status = 201, response_body = c.body ' +
      'FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(scope, key, token, body) ' +
      'WHERE k.scope = c.scope AND k.key = c.key AND k.token = c.token RETURNING c.scope, c.key, c.token'
  }
} as const
