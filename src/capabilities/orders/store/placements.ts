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
 * How many batches PostgreSQL's store writes at once, each on a connection of its own: the next batch locks its pets
 * while the one before holds the changes lock, and takes that lock the moment the other commits, without waiting for
 * this process's turn to come round (placeOrder's req/s 1.15x, median of 10 paired rounds by hand; 4 measured worse
 * than 2: smaller batches). Two batches never wait on each other in a circle: both lock their pets in id order before
 * the changes lock. SQLite's writer is synchronous: one at a time.
 */
export const POSTGRES_PLACEMENTS_IN_FLIGHT = 2

/**
 * The group commit of placed orders, as both stores run it: orders that arrive together are placed in
 * one transaction, in arrival order, and each is acknowledged once that transaction has committed; those
 * queued behind a batch that found the store unavailable fail with it at once. `maxInFlight` batches are written at once.
 */
export function groupPlacements (write: BatchWriter<Placement, PlaceOrderOutcome>, maxInFlight = 1): GroupCommit<Placement, PlaceOrderOutcome> {
  return storeGroupCommit(write, MAX_PLACEMENTS_PER_COMMIT, maxInFlight)
}
