// When a failed attempt is tried again, and what an answer says about the endpoint: pure, so the
// dispatcher's choices are tested without a clock or a receiver

/** A `Retry-After` asking for more is honoured only up to this: a receiver cannot park a delivery for days. */
export const RETRY_AFTER_CAP_MS = 3_600_000
/** Each scheduled delay strays up to this fraction either side, so retries of many deliveries spread out. */
export const RETRY_JITTER = 0.2
/** Answers that say the receiver is overloaded or down for a while: the whole endpoint waits, not only this delivery. */
const THROTTLING_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504])

/** What a failed attempt came to, as the sender saw it. */
export interface FailedAttempt {
  /** The receiver's status, when it answered. */
  status?: number
  /** Its `Retry-After` header, when it sent one. */
  retryAfter?: string
}

/** What follows a failed attempt. */
export interface RetryDecision {
  /** When to try this delivery again; undefined: the schedule is exhausted, it is given up. */
  retryAt: number | undefined
  /** The endpoint asked to be left alone until this time (throttled): none of its deliveries before it. */
  endpointWaitsUntil: number | undefined
  /** 410 Gone: the receiver says the endpoint is no more; it is disabled. */
  disable: boolean
}

/**
 * `Retry-After` in ms from `now` (delta-seconds or an HTTP date), capped at {@link RETRY_AFTER_CAP_MS};
 * undefined when absent or unreadable.
 */
export function retryAfterMs (header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined
  const text = header.trim()
  let ms: number
  if (/^\d+$/.test(text)) ms = Number(text) * 1000
  else {
    // an HTTP date names its day and month; Date.parse alone would read '-5' as a year
    const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN
    if (Number.isNaN(at)) return undefined
    ms = at - now
  }
  return Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS)
}

/** `delayMs` moved by up to {@link RETRY_JITTER} of it either side; `random` in [0, 1). */
export function jittered (delayMs: number, random: number): number {
  return Math.round(delayMs * (1 + RETRY_JITTER * (2 * random - 1)))
}

/**
 * After the `attempts`-th failed attempt (1 for the first): the schedule's next delay, jittered, but
 * never sooner than a `Retry-After` the receiver sent; a throttling answer (429, 502, 503, 504) makes the
 * whole endpoint wait as long; 410 disables the endpoint.
 */
export function decideRetry (failed: FailedAttempt, attempts: number, scheduleMs: readonly number[], now: number, random: number): RetryDecision {
  const delay = scheduleMs[attempts - 1]
  const asked = retryAfterMs(failed.retryAfter, now)
  const retryAt = delay === undefined ? undefined : now + Math.max(jittered(delay, random), asked ?? 0)
  const throttled = failed.status !== undefined && THROTTLING_STATUSES.has(failed.status)
  const endpointWait = asked ?? (delay === undefined ? undefined : jittered(delay, random))
  return {
    retryAt,
    endpointWaitsUntil: throttled && endpointWait !== undefined ? now + endpointWait : undefined,
    disable: failed.status === 410
  }
}
