/**
 * Safe retries of creates (`Idempotency-Key`): the claim rule, the records' store, the service a create
 * route calls, and how a creating store completes a claim in its own transaction.
 */
export { idempotency } from './idempotency-plugin.js'
export { IdempotencyClaimLostError, type IdempotencyCompletion } from './claims.js'
export { fingerprintOf, parseIdempotencyKey } from './idempotency-key.js'
export { IDEMPOTENCY_KEY_PATTERN, idempotencyKeyHeaderSchema } from './idempotency-header.js'
export { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from './policy.js'
export { COMPLETE_CLAIM_SQL, type IdempotencyStore } from './store/idempotency-store.js'
export { writeBatchItem } from './store/batch-item.js'
