import { isIP } from 'node:net'
import type { Agent, request } from 'undici'
import type { WebhookSettings } from '../../infra/config/config.js'
import { stringifyJson } from '../../infra/json/exact-json.js'
import type { Event } from '../events/index.js'
import { addressRefusal, guardedLookup, hostOf } from './address-guard.js'
import { signWebhook } from './signature.js'
import { RESPONSE_BODY_LIMIT_BYTES, WEBHOOK_USER_AGENT } from './webhook-policy.js'

/** What one attempt came to: delivered (a 2xx), or why not (the status, or the error's code). */
export type AttemptResult = { delivered: true, status: number } | { delivered: false, status?: number, retryAfter?: string, error: string }

/** One endpoint's request, ready to send. */
export interface WebhookRequest {
  url: string
  event: Event
  secrets: readonly string[]
}

/** A message that is not an event of the feed (`webhook.test`): its own `webhook-id` and body. */
export interface WebhookMessage {
  url: string
  id: string
  body: string
  secrets: readonly string[]
}

/** The undici pieces a sender uses, loaded with its first delivery. */
interface UndiciClient {
  agent: Agent
  request: typeof request
}

/**
 * Sends webhook requests over undici with the safety a sender owes its operator: no redirects, a time
 * limit for the whole attempt, at most 64 KiB of an answer read, and, unless private networks are
 * allowed, connections only to public addresses, checked on the address actually connected to.
 */
export class WebhookSender {
  // undici is loaded with the first delivery: most instances have no endpoint, and loading it was a
  // tenth of start-up (docs/performance.md)
  #client: Promise<UndiciClient> | undefined
  readonly #settings: WebhookSettings

  constructor (settings: WebhookSettings) {
    this.#settings = settings
  }

  async #connect (): Promise<UndiciClient> {
    const undici = await import('undici')
    const settings = this.#settings
    const agent = new undici.Agent({
      connect: { timeout: settings.timeoutMs, ...(settings.allowPrivateNetworks ? {} : { lookup: guardedLookup(settings) }) },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      // one connection per delivery in flight to an endpoint, never more
      connections: settings.endpointConcurrency
    })
    return { agent, request: undici.request }
  }

  /** POSTs the event, signed, with its id as `webhook-id`, and says how it went; never throws. `signal` aborts it (shutdown). */
  async send ({ url, event, secrets }: WebhookRequest, now: Date, signal: AbortSignal): Promise<AttemptResult> {
    // int64 values beyond 2^53 digit for digit, as the feed writes them
    return await this.post({ url, id: String(event.id), body: stringifyJson(event), secrets }, now, signal)
  }

  /** POSTs a message, signed, with the same rules as an event's delivery; never throws. */
  async post ({ url, id, body, secrets }: WebhookMessage, now: Date, signal: AbortSignal): Promise<AttemptResult> {
    const target = new URL(url)
    const host = hostOf(target)
    // an address literal is connected to without a look-up, so the guard on the look-up never sees it
    const refusal = isIP(host) === 0 ? undefined : addressRefusal(host, this.#settings)
    if (refusal !== undefined) return { delivered: false, error: `refused: ${refusal}` }
    if (target.protocol !== 'https:' && !(target.protocol === 'http:' && this.#settings.allowHttp)) {
      return { delivered: false, error: `refused: ${target.protocol} URLs are not allowed` }
    }
    const timestamp = Math.floor(now.getTime() / 1000)
    try {
      const { agent, request } = await (this.#client ??= this.#connect())
      const answer = await request(target, {
        method: 'POST',
        dispatcher: agent,
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
    }
  }

  async close (): Promise<void> {
    const client = this.#client
    if (client !== undefined) await (await client).agent.destroy()
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
