import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop, MAX_STOP_GRACE_MS } from '../../infra/background/background-loop.js'
import type { Clock } from '../../infra/runtime/clock.js'
import type { WebhookSettings } from '../../infra/config/config.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { ClaimedWebhookEndpoint, DueWebhookDelivery, WebhookAttemptOutcome, WebhookDeliveryStore } from './store/webhook-store.js'
import { decideRetry } from './retry-policy.js'
import type { AttemptResult, WebhookSender } from './webhook-sender.js'

/** An endpoint failing without a single success for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 3 * 86_400_000
/** On stop (SIGTERM), how long attempts in flight get to finish before they are cut off and left to be retried. */
export const WEBHOOK_STOP_GRACE_MS = MAX_STOP_GRACE_MS
// events scheduled per claim: a long backlog is scheduled in steps, between attempts
const SCHEDULE_BATCH = 100
// after the store failed a look for work: no look (and no log line) for this long, rather than four a second
const STORE_FAILURE_PAUSE_MS = 5_000
// one endpoint's turn ends after this many deliveries or this long, whichever first: then the endpoint
// served longest ago goes next, so every endpoint with work is served in turn whatever their number
const TURN_DELIVERIES = 100
const TURN_MS = 1_000

export interface DispatcherOptions {
  store: WebhookDeliveryStore
  sender: WebhookSender
  settings: WebhookSettings
  clock: Clock
  log: FastifyBaseLogger
  metrics: Metrics
}

/**
 * Delivers webhooks from the queue in the store: every instance runs one, each takes endpoints by a lease
 * (one instance per endpoint at a time, so one endpoint's deliveries go out in event-id order), at most
 * `WEBHOOK_CONCURRENCY` endpoints at once: each pass of its loop takes one endpoint and serves it. A
 * failed attempt is retried on the schedule; a slow or dead endpoint holds one slot and nothing else:
 * the API's requests never wait for a delivery.
 */
export class WebhookDispatcher {
  readonly #options: DispatcherOptions
  // renewed before each attempt and twice as long as one can take, so a live holder keeps it; a dead
  // holder's endpoint is taken over once it runs out
  readonly #leaseMs: number
  readonly #loop: BackgroundLoop
  #stopping = false
  #pausedUntil = 0
  // slots serving an endpoint that is failing (timing out, say): at most half of them, so dead
  // endpoints never hold every slot while healthy ones wait
  #failingServed = 0
  readonly #failingSlots: number

  constructor (options: DispatcherOptions) {
    this.#options = options
    this.#leaseMs = 2 * options.settings.timeoutMs + 5_000
    this.#failingSlots = Math.max(1, Math.floor(options.settings.concurrency / 2))
    this.#loop = new BackgroundLoop({
      name: 'webhook_delivery',
      intervalMs: options.settings.pollIntervalMs,
      concurrency: options.settings.concurrency,
      stopGraceMs: WEBHOOK_STOP_GRACE_MS,
      pass: async (signal) => await this.#serveNext(signal),
      onError: (error) => { this.#pause(error) },
      metrics: options.metrics
    })
  }

  start (): void {
    this.#loop.start()
  }

  /** Looks for endpoints with work at once instead of at the next poll (after an event is recorded, say). */
  wake (): void {
    this.#loop.wake()
  }

  /**
   * Takes no more endpoints and starts no more attempts; attempts in flight get {@link WEBHOOK_STOP_GRACE_MS}
   * to finish, then are cut off (the delivery stays due, and is retried: at least once); every lease
   * held is given back. Resolves when all that is done.
   */
  async stop (): Promise<void> {
    this.#stopping = true
    await this.#loop.stop()
    await this.#options.sender.close()
  }

  /** One pass: takes one endpoint with work and serves it; true when it found one (there may be more). */
  async #serveNext (signal: AbortSignal): Promise<boolean> {
    const { store, clock, log } = this.#options
    if (clock.now() < this.#pausedUntil) return false
    const claim = await store.claimWebhookEndpoint(new Date(clock.now()), this.#leaseMs, randomBytes(12).toString('base64url'),
      this.#failingServed < this.#failingSlots)
    if (claim === undefined) return false
    // another slot looks for the next endpoint meanwhile
    this.#loop.wake()
    const failing = claim.failingSince !== null
    if (failing) this.#failingServed++
    try {
      await this.#serve(claim, signal)
    } catch (error) {
      log.warn({ err: error, endpointId: claim.id }, 'webhook delivery to an endpoint stopped on a store error; it resumes when the lease ends')
    } finally {
      if (failing) this.#failingServed--
    }
    return true
  }

  /** After the store failed a look for work: one log line, and no look for a while. */
  #pause (error: unknown): void {
    const now = this.#options.clock.now()
    if (now < this.#pausedUntil) return
    this.#pausedUntil = now + STORE_FAILURE_PAUSE_MS
    this.#options.log.warn({ err: error }, `could not look for webhook deliveries; trying again in ${STORE_FAILURE_PAUSE_MS / 1000} s`)
  }

  /**
   * Delivers an endpoint's due deliveries, smallest event ids first, up to `WEBHOOK_ENDPOINT_CONCURRENCY` in
   * flight, their outcomes recorded in one transaction a batch, until none is due, one fails, its turn ends,
   * or the dispatcher stops. A receiver that asked to be left alone (429, 502-504, Retry-After) gets the
   * lease back only from then on: none of its deliveries before.
   */
  async #serve (claim: ClaimedWebhookEndpoint, signal: AbortSignal): Promise<void> {
    const { store, clock, settings } = this.#options
    const turnEnds = clock.now() + TURN_MS
    let waitUntil = 0
    try {
      await store.scheduleWebhookDeliveries(claim, SCHEDULE_BATCH)
      for (let served = 0; !this.#stopping && served < TURN_DELIVERIES && clock.now() < turnEnds;) {
        const due = await store.nextDueWebhookDeliveries(claim, new Date(clock.now()), this.#leaseMs, settings.endpointConcurrency)
        if (due.length === 0) return
        const attempts = await Promise.all(due.map(async (delivery) => ({ eventId: delivery.eventId, made: await this.#attempt(claim, delivery, signal) })))
        // one cut off by shutdown is not an answer of the endpoint: it stays due and is retried
        const made = attempts.flatMap(({ eventId, made }) => made === undefined ? [] : [{ eventId, outcome: made.outcome }])
        if (made.length > 0) await store.recordWebhookAttempts(claim, made, new Date(clock.now()))
        for (const { made } of attempts) waitUntil = Math.max(waitUntil, made?.waitUntil ?? 0)
        if (made.length < attempts.length || made.some(({ outcome }) => !outcome.delivered)) return
        served += due.length
      }
    } finally {
      await store.releaseWebhookEndpoint(claim, new Date(Math.max(clock.now(), waitUntil)))
    }
  }

  /** One attempt and what it came to; `waitUntil`: the receiver asked to be left alone until then. Undefined when cut off by shutdown. */
  async #attempt (claim: ClaimedWebhookEndpoint, due: DueWebhookDelivery, signal: AbortSignal): Promise<{ outcome: WebhookAttemptOutcome, waitUntil?: number } | undefined> {
    const { sender, clock, log, metrics } = this.#options
    const attempt = due.attempts + 1
    const context = { endpointId: claim.id, eventId: due.eventId, attempt }
    if (due.event === undefined) {
      log.warn(context, 'webhook delivery given up: its event is no longer retained')
      metrics.webhookDeliveries.inc({ outcome: 'failed', endpoint_id: String(claim.id) })
      return { outcome: { startedAt: new Date(clock.now()), durationMs: 0, status: undefined, delivered: false, error: 'the event is no longer retained', retryAt: undefined, disable: false } }
    }
    const event = due.event
    const started = clock.now()
    // loaded with the first attempt, not at start: without tracing its spans are no-ops, and most instances never deliver
    const { SpanStatusCode, trace } = await import('@opentelemetry/api')
    const result = await trace.getTracer('petstore').startActiveSpan('webhook.deliver', {
      attributes: { 'petstore.webhook.endpoint_id': claim.id, 'petstore.event.id': event.id, 'petstore.webhook.attempt': attempt }
    }, async (span): Promise<AttemptResult> => {
      try {
        const sent = await sender.send({ url: claim.url, event, secrets: claim.secrets }, new Date(started), signal)
        if (sent.status !== undefined) span.setAttribute('http.response.status_code', sent.status)
        if (!sent.delivered) span.setStatus({ code: SpanStatusCode.ERROR, message: sent.error })
        return sent
      } finally {
        span.end()
      }
    })
    if (signal.aborted && !result.delivered) return undefined
    const now = clock.now()
    const seconds = (now - started) / 1000
    const made = { startedAt: new Date(started), durationMs: Math.round(now - started), status: result.status }
    if (result.delivered) {
      log.info({ ...context, status: result.status, durationMs: now - started }, 'webhook delivered')
      metrics.webhookDeliveries.inc({ outcome: 'delivered', endpoint_id: String(claim.id) })
      metrics.webhookDeliveryDuration.observe({ outcome: 'delivered' }, seconds)
      metrics.webhookDeliveryLag.observe(Math.max(0, now - Date.parse(event.occurredAt)) / 1000)
      return { outcome: { ...made, delivered: true } }
    }
    const decision = decideRetry(result, attempt, this.#options.settings.retryScheduleMs, now, Math.random())
    const retryAt = decision.retryAt === undefined ? undefined : new Date(decision.retryAt)
    // 410 Gone: the receiver says the endpoint is no more
    const disable = decision.disable || (claim.failingSince !== null && now - claim.failingSince >= WEBHOOK_DISABLE_AFTER_MS)
    const outcome = retryAt === undefined ? 'failed' : 'retrying'
    log[outcome === 'failed' ? 'warn' : 'info']({ ...context, error: result.error, retryAt: retryAt?.toISOString(), disabled: disable, durationMs: now - started },
      outcome === 'failed' ? 'webhook delivery failed for good: the retry schedule is exhausted' : 'webhook delivery failed; retrying later')
    metrics.webhookDeliveries.inc({ outcome, endpoint_id: String(claim.id) })
    metrics.webhookDeliveryDuration.observe({ outcome }, seconds)
    return { outcome: { ...made, delivered: false, error: result.error, retryAt, disable }, ...(decision.endpointWaitsUntil === undefined ? {} : { waitUntil: decision.endpointWaitsUntil }) }
  }
}
