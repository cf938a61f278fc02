import { emitProcessWarning } from './deprecation.js'
import type { RetryPolicy } from './retry.js'
import type { RetryEvent, TransportSettings } from './transport.js'

/** How to reach the service and how hard to try. */
export interface ClientOptions {
  /** The base address, ending in `/v1`: `https://api.example.com/v1` (production) or the staging one. */
  baseUrl: string
  /** The API key, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** The fetch to use (default: the global one); called as a plain function, never as a method of anything. */
  fetch?: typeof globalThis.fetch
  /**
   * Retries after a failed attempt (default 3, so 4 attempts at most; 0 turns retrying off).
   * Retried: no answer (network failure or timeout), 429, 502, 503, 504 and, for createPet,
   * 409 `idempotency_request_in_progress`.
   */
  retries?: number
  /** Base of the exponential backoff when the answer has no `Retry-After`, in ms (default 200). */
  retryBaseDelayMs?: number
  /**
   * The longest the client waits before one retry, in ms (default 10 000). A `Retry-After` asking
   * for longer is not waited for: the error is thrown with `retryAfterMs` set.
   */
  maxRetryDelayMs?: number
  /** How long one attempt may take, answer body included, in ms (default 30 000); then it counts as a network failure. */
  timeoutMs?: number
  /**
   * How long `events.follow` waits after an empty page before it asks again, in ms (default 1000);
   * each `follow` may override it with its own `pollIntervalMs`.
   */
  eventPollIntervalMs?: number
  /** Receives deprecation warnings (default: `process.emitWarning`). Each client warns once per deprecated operation. */
  onWarning?: (warning: Error) => void
  /** Called before each retry, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void
}

/** Options every operation takes. */
export interface RequestOptions {
  /** Aborts the call, retries and waits included; the call then rejects with the signal's reason. */
  signal?: AbortSignal
}

/** The options with every default applied, checked once. */
export interface ClientSettings extends TransportSettings {
  /** The base address without a trailing slash. */
  readonly baseUrl: string
  readonly onWarning: (warning: Error) => void
  readonly eventPollIntervalMs: number
}

const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 200, maxDelayMs: 10_000 }
const DEFAULT_TIMEOUT_MS = 30_000
const DEFAULT_EVENT_POLL_INTERVAL_MS = 1000

/** Applies the defaults; throws a TypeError naming the option that is wrong. */
export function resolveOptions (options: ClientOptions): ClientSettings {
  return Object.freeze({
    baseUrl: checkBaseUrl(options.baseUrl),
    apiKey: checkApiKey(options.apiKey),
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: checkCount('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1),
    retry: Object.freeze({
      retries: checkCount('retries', options.retries ?? DEFAULT_RETRY.retries, 0),
      baseDelayMs: checkCount('retryBaseDelayMs', options.retryBaseDelayMs ?? DEFAULT_RETRY.baseDelayMs, 0),
      maxDelayMs: checkCount('maxRetryDelayMs', options.maxRetryDelayMs ?? DEFAULT_RETRY.maxDelayMs, 0)
    }),
    eventPollIntervalMs: checkPollInterval('eventPollIntervalMs', options.eventPollIntervalMs ?? DEFAULT_EVENT_POLL_INTERVAL_MS),
    onWarning: options.onWarning ?? emitProcessWarning,
    onRetry: options.onRetry
  })
}

function checkBaseUrl (value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined
  const path = url?.pathname.replace(/\/+$/, '')
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || path?.endsWith('/v1') !== true || url.search !== '' || url.hash !== '') {
    throw new TypeError(`baseUrl must be an absolute http(s) URL ending in /v1, such as https://api.example.com/v1; got "${value}"`)
  }
  return `${url.origin}${path}`
}

function checkApiKey (value: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError('apiKey must be a non-empty string')
  return value.trim()
}

/** A pause between polls: at least 1 ms, so an idle follower never spins against the service. */
export function checkPollInterval (name: string, value: number): number {
  return checkCount(name, value, 1)
}

function checkCount (name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new TypeError(`${name} must be an integer of at least ${min}; got ${String(value)}`)
  return value
}
