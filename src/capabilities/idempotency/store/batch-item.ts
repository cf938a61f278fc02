import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import { IdempotencyClaimLostError, type IdempotencyCompletion } from '../claims.js'

/**
 * One item of an embedded database's group-commit batch, inside the batch's transaction. An item that completes an
 * `Idempotency-Key` claim is written by `inSavepoint` (its own savepoint), so that a claim found lost undoes that item
 * alone and is its outcome; any other error is the engine's and fails the whole batch. An item without a claim cannot
 * fail alone, so it is written by `plain`: a savepoint is not free (SQLite copies each page the item changes into its
 * statement journal, docs/performance.md).
 */
export function writeBatchItem<I extends { completing: IdempotencyCompletion | undefined }, R> (item: I, plain: (item: I) => R, inSavepoint: (item: I) => R): ItemOutcome<R> {
  if (item.completing === undefined) return { ok: true, value: plain(item) }
  try {
    return { ok: true, value: inSavepoint(item) }
  } catch (error) {
    if (error instanceof IdempotencyClaimLostError) return { ok: false, error }
    throw error
  }
}
