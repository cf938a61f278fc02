import { storeGroupCommit, type BatchWriter, type GroupCommit } from '../../../infra/database/group-commit.js'
import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { Pet } from '../pet-schemas.js'
import type { NewPetRecord } from './pet-store.js'

/** A create waiting for its group commit: the pet, and the idempotency claim its answer completes. */
export interface PendingCreate {
  pet: NewPetRecord
  completing: IdempotencyCompletion | undefined
}

// a bound on one batch, so one burst cannot hold SQLite's write lock (or PostgreSQL's id lock) for long
const MAX_CREATES_PER_COMMIT = 256

/**
 * The group commit of pet creates, as both stores run it: at most 256 creates per batch, and the
 * creates queued behind a batch that found the store unavailable fail with it (their 503 comes
 * within the store's bound instead of after a chain of timeouts).
 */
export function groupCreates (write: BatchWriter<PendingCreate, Pet>): GroupCommit<PendingCreate, Pet> {
  return storeGroupCommit(write, MAX_CREATES_PER_COMMIT)
}
