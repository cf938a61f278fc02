import { storeGroupCommit, type BatchWriter, type GroupCommit } from '../../../infra/database/group-commit.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { PlaceOrderOutcome } from '../order-decisions.js'
import type { Metadata } from '../order-metadata.js'

/** An order waiting for its group commit: the pet it is for, its metadata, and the idempotency claim its answer completes. */
export interface Placement {
  petId: Int64
  metadata: Metadata
  completing: IdempotencyCompletion | undefined
}

// as for pet creates: a burst cannot hold SQLite's write lock (or PostgreSQL's changes lock) for long
const MAX_PLACEMENTS_PER_COMMIT = 256

/**
 * The group commit of placed orders, as both stores run it: orders that arrive together are placed in
 * one transaction, in arrival order, and each is acknowledged once that transaction has committed; those
 * queued behind a batch that found the store unavailable fail with it at once.
 */
export function groupPlacements (write: BatchWriter<Placement, PlaceOrderOutcome>): GroupCommit<Placement, PlaceOrderOutcome> {
  return storeGroupCommit(write, MAX_PLACEMENTS_PER_COMMIT)
}
