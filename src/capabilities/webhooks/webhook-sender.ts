import { isIP } from 'node:net'
import type { Dispatcher, Pool, request } from 'undici'
import type { WebhookSettings } from '../../infra/config/config.js'
import { addressRefusal, guardedLookup, hostOf } from './address-guard.js'
import { signWebhook } from './signature.js'
import { RESPONSE_BODY_LIMIT_BYTES, WEBHOOK_USER_AGENT } from './webhook-policy.js'

/** What one attempt came to: delivered (a 2xx), or why not (the status, or the error's code). */
export type AttemptResult = { delivered: true, status: number } | { delivered: false, status?: number, retryAfter?: string, error: string }

/** One request, ready to send: an event as the feed's serializer writes it, its id the `webhook-id`; or a test message. */
export interface WebhookMessage {
  /** The endpoint's id: its connections are its own, closed when its URL changes or it is sent nothing for a while. */
  endpointId?: number
  url: string
  id: string
  body: string
  secrets: readonly string[]
}

/** The undici pieces a sender uses, loaded with its first delivery. */
interface UndiciClient {
  Pool: typeof Pool
  request: typeof request
}

/** One endpoint's connections: to its URL, with how many requests use them and when one last did. */
interface EndpointPool {
  href: string
  pool: Pool
  inUse: number
  lastUsed: number
}

/**
 * An endpoint's connections are closed and dropped once it has been sent nothing for this long: a deleted endpoint
 * (on any instance: it is never claimed again) or an old URL holds none for longer, and the sender's pools are only
 * those of endpoints it delivers to now.
 */
export const WEBHOOK_POOL_IDLE_MS = 60_000

/**
 * Sends webhook requests over undici with the safety a sender owes its operator: no redirects, a time
 * limit for the whole attempt, at most 64 KiB of an answer read, and, unless private networks are
 * allowed, connections only to public addresses, checked on the address actually connected to.
 */
export class WebhookSender {
  // undici is loaded with the first delivery: most instances have no endpoint, and loading it was a
  // tenth of start-up (docs/performance.md)
  #client: Promise<UndiciClient> | undefined
  // one pool per endpoint, not per origin: endpoints on one host would otherwise share its connections, and a request
  // waiting for one spends its time limit waiting. Keyed by the endpoint's id (by the URL for a message without one)
  readonly #pools = new Map<string, EndpointPool>()
  readonly #settings: WebhookSettings
  readonly #idleMs: number
  #sweeper: NodeJS.Timeout | undefined

  /** `idleMs`: how long an endpoint's connections outlive its last request ({@link WEBHOOK_POOL_IDLE_MS}). */
  constructor (settings: WebhookSettings, { idleMs = WEBHOOK_POOL_IDLE_MS }: { idleMs?: number } = {}) {
    this.#settings = settings
    this.#idleMs = idleMs
  }

  /** How many endpoints' connection pools the sender holds now (what its tests count). */
  get poolCount (): number {
    return this.#pools.size
  }

  async #connect (): Promise<UndiciClient> {
    const { Pool, request } = await import('undici')
    this.#sweeper = setInterval(() => { this.#sweep() }, this.#idleMs).unref()
    return { Pool, request }
  }

  /** The endpoint's pool, taken for one request (give it back with {@link #release}); a pool to an old URL is closed. */
  #take (Pool: UndiciClient['Pool'], key: string, url: URL): EndpointPool {
    let entry = this.#pools.get(key)
    if (entry !== undefined && entry.href !== url.href) {
      // the endpoint's URL changed: the old address's connections close once their requests are answered
      this.#pools.delete(key)
      entry.pool.close().catch(() => {})
      entry = undefined
    }
    if (entry === undefined) {
      const settings = this.#settings
      entry = {
        href: url.href,
        pool: new Pool(url.origin, {
          connect: { timeout: settings.timeoutMs, ...(settings.allowPrivateNetworks ? {} : { lookup: guardedLookup(settings) }) },
          headersTimeout: settings.timeoutMs,
          bodyTimeout: settings.timeoutMs,
          // one connection per delivery in flight to the endpoint, never more: a request past that waits for one
          connections: settings.endpointConcurrency
        }),
        inUse: 0,
        lastUsed: 0
      }
      this.#pools.set(key, entry)
    }
    entry.inUse++
    return entry
  }

  #release (entry: EndpointPool): void {
    entry.inUse--
    entry.lastUsed = performance.now()
  }

  /** Closes and drops the pools of endpoints sent nothing for the idle time: deleted ones, ones with nothing to send. */
  #sweep (): void {
    const before = performance.now() - this.#idleMs
    for (const [key, entry] of this.#pools) {
      if (entry.inUse > 0 || entry.lastUsed > before) continue
      this.#pools.delete(key)
      entry.pool.close().catch(() => {})
    }
  }

  /**
   * POSTs the message, signed, with `id` as `webhook-id`, and says how it went; never throws. `signal` aborts it
   * (shutdown); `onDispatch` is told when the request is written to its connection, connected (what a rate limit counts from).
   */
  async post ({ endpointId, url, id, body, secrets }: WebhookMessage, now: Date, signal: AbortSignal, onDispatch?: () => void): Promise<AttemptResult> {
    const target = new URL(url)
    const host = hostOf(target)
    // an address literal is connected to without a look-up, so the guard on the look-up never sees it
    const refusal = isIP(host) === 0 ? undefined : addressRefusal(host, this.#settings)
    if (refusal !== undefined) return { delivered: false, error: `refused: ${refusal}` }
    if (target.protocol !== 'https:' && !(target.protocol === 'http:' && this.#settings.allowHttp)) {
      return { delivered: false, error: `refused: ${target.protocol} URLs are not allowed` }
    }
    const timestamp = Math.floor(now.getTime() / 1000)
    let entry: EndpointPool | undefined
    try {
      const { Pool, request } = await (this.#client ??= this.#connect())
      entry = this.#take(Pool, endpointId === undefined ? `url ${target.href}` : `endpoint ${endpointId}`, target)
      const answer = await request(target, {
        method: 'POST',
        dispatcher: onDispatch === undefined ? entry.pool : entry.pool.compose((dispatch) => (options, handler) => dispatch(options, notifyingOnStart(handler, onDispatch))),
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secrets, id, timestamp, body)
        },
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#settings.timeoutMs)])
      })
      await drain(answer.body)
      const { statusCode } = answer
      if (statusCode >= 200 && statusCode < 300) return { delivered: true, status: statusCode }
      const retryAfter = answer.headers['retry-after']
      return { delivered: false, status: statusCode, error: `answered ${statusCode}`, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) }
    } catch (error) {
      return { delivered: false, error: describeError(error) }
    } finally {
      if (entry !== undefined) this.#release(entry)
    }
  }

  async close (): Promise<void> {
    if (this.#client !== undefined) await this.#client
    clearInterval(this.#sweeper)
    await Promise.all([...this.#pools.values()].map(async ({ pool }) => { await pool.destroy() }))
    this.#pools.clear()
  }
}

/**
 * `handler`, telling `onStart` when its request starts: undici starts it right before it writes the request on a connected
 * socket, so a connection still being made (the endpoint's first, or one more) is not counted as sending time.
 */
function notifyingOnStart (handler: Dispatcher.DispatchHandler, onStart: () => void): Dispatcher.DispatchHandler {
  return {
    onRequestStart: (controller, context) => {
      onStart()
      handler.onRequestStart?.(controller, context)
    },
    onRequestUpgrade: (controller, statusCode, headers, socket) => { handler.onRequestUpgrade?.(controller, statusCode, headers, socket) },
    onResponseStart: (controller, statusCode, headers, statusMessage) => { handler.onResponseStart?.(controller, statusCode, headers, statusMessage) },
    onResponseData: (controller, chunk) => { handler.onResponseData?.(controller, chunk) },
    onResponseEnd: (controller, trailers) => { handler.onResponseEnd?.(controller, trailers) },
    onResponseError: (controller, error) => { handler.onResponseError?.(controller, error) }
  }
}

/** Reads at most {@link RESPONSE_BODY_LIMIT_BYTES} of an answer, then drops the rest with the connection. */
async function drain (body: AsyncIterable<Buffer> & { destroy: () => unknown }): Promise<void> {
  let read = 0
  for await (const chunk of body) {
    read += chunk.length
    if (read >= RESPONSE_BODY_LIMIT_BYTES) {
      body.destroy()
      return
    }
  }
}

/** A failure in words for logs and `webhooks list`: the error's code (ECONNREFUSED, UND_ERR_…), never a URL's secrets. */
function describeError (error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current.name === 'TimeoutError' || current.name === 'HeadersTimeoutError' || current.name === 'BodyTimeoutError') return 'timed out'
    if (current.name === 'WebhookAddressError') return `refused: ${current.message}`
    const code = (current as NodeJS.ErrnoException).code
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code
    current = current.cause
  }
  return error instanceof Error ? error.name : 'failed'
}
