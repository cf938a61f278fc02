/** How long a key's record is kept: a repeat within this replays the first answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000
/** A claim still in flight this long after it was made belongs to a request that died; it is taken over. */
export const IDEMPOTENCY_LEASE_MS = 60_000
/** How often expired records are deleted. */
export const IDEMPOTENCY_SWEEP_INTERVAL_MS = 10 * 60_000
/** Longest Idempotency-Key accepted, in characters (without the quotes of the structured form). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255
