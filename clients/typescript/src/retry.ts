/** How a client retries; see `ClientOptions` for the meaning and defaults of each field. */
export interface RetryPolicy {
  readonly retries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

/** Statuses worth another attempt: over a rate limit, or the service (or a gateway before it) briefly unavailable. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504])

/**
 * Whether an error answer may be retried. A 409 only when a create with the same
 * Idempotency-Key is still in flight: its retry gets the first request's answer.
 */
export function isRetryableAnswer (status: number, code: string | undefined): boolean {
  return RETRYABLE_STATUSES.has(status) || (status === 409 && code === 'idempotency_request_in_progress')
}

/**
 * A `Retry-After` value (RFC 9110: delay seconds or an HTTP date) in milliseconds from `now`;
 * undefined when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter (value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // every HTTP-date form starts with the day's name; Date.parse alone would take "-1" for a year
  const at = /^[A-Za-z]{3,9},? /.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * How long to wait before retry number `retry` (1 for the first retry). With a `Retry-After`,
 * that wait plus up to one base delay of jitter, so that clients told the same instant do not all
 * come back at once; without one, exponential backoff with jitter: between half and all of
 * base × 2^(retry−1), capped at the maximum.
 */
export function retryDelayMs (policy: RetryPolicy, retry: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return retryAfterMs + random() * policy.baseDelayMs
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return ceiling / 2 + random() * ceiling / 2
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export async function sleep (ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      // the caller's own abort reason, passed through as fetch passes it
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
