import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop, MAX_STOP_GRACE_MS } from '../../infra/background/background-loop.js'
import type { Clock } from '../../infra/runtime/clock.js'
import type { WebhookSettings } from '../../infra/config/config.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { SerializeEvent } from '../events/index.js'
import type { ClaimedWebhookEndpoint, DueWebhookDelivery, WebhookAttemptOutcome, WebhookDeliveryStore } from './store/webhook-store.js'
import { decideRetry } from './retry-policy.js'
import { sendSpacingMs, sleepUntil, wallTimeOf } from './send-pace.js'
import type { AttemptResult, WebhookSender } from './webhook-sender.js'
import type { WebhookMetrics } from './webhook-metrics.js'
import { webhookUrlForLog } from './webhook-url.js'

/** An endpoint failing without a single success for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 3 * 86_400_000
/** On stop (SIGTERM), how long attempts in flight get to finish before they are cut off and left to be retried. */
export const WEBHOOK_STOP_GRACE_MS = MAX_STOP_GRACE_MS
// events scheduled per claim: a long backlog is scheduled in steps, between attempts
const SCHEDULE_BATCH = 100
// after the store failed a look for work: no look (and no log line) for this long, rather than four a second
const STORE_FAILURE_PAUSE_MS = 5_000
/**
 * One endpoint's turn ends after this many deliveries or {@link TURN_MS}, whichever first: then the endpoint
 * served longest ago goes next, so every endpoint with work is served in turn whatever their number.
 */
export const TURN_DELIVERIES = 100
/** The longest one endpoint's turn lasts (see {@link TURN_DELIVERIES}). */
const TURN_MS = 1_000
/**
 * An attempt unanswered for this long makes its endpoint slow: the endpoint gives its slot to the next one
 * with work (keeping its lease and its attempts), so endpoints that go dark do not hold the slots for
 * `WEBHOOK_TIMEOUT_MS` while healthy ones wait. At most `WEBHOOK_CONCURRENCY` endpoints are slow at once
 * beside the slots; failing ones count against their half of the slots whether slow or not.
 */
export const WEBHOOK_SLOW_ATTEMPT_MS = 500
// a rate-limited endpoint waiting this long for its next send gives its slot to the next endpoint, as a slow one does
const PACE_YIELD_MS = 50
// a lease the store failed to take back is tried again this often (each try on a locked SQLite file holds the loop for its busy timeout)
const GIVE_BACK_RETRY_MS = 1_000

export interface DispatcherOptions {
  store: WebhookDeliveryStore
  sender: WebhookSender
  settings: WebhookSettings
  clock: Clock
  log: FastifyBaseLogger
  /** The background loops' metrics. */
  metrics: Metrics
  /** What delivery counts: attempts, their time and lag. */
  webhookMetrics: WebhookMetrics
  /** The feed's serializer (`app.eventSerializer.event`): a delivery's body is the event as a feed page holds it. */
  serializeEvent: SerializeEvent
}

/**
 * Delivers webhooks from the queue in the store: every instance runs one, each takes endpoints by a lease
 * (one instance per endpoint at a time, so one endpoint's deliveries go out in event-id order), at most
 * `WEBHOOK_CONCURRENCY` endpoints at once: each pass of its loop takes one endpoint and serves it. A
 * failed attempt is retried on the schedule; a slow or dead endpoint holds one slot for at most
 * {@link WEBHOOK_SLOW_ATTEMPT_MS}, then gives it up, and nothing else: the API's requests never wait for a delivery.
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
  // endpoints served without a slot, their attempts slow (WEBHOOK_SLOW_ATTEMPT_MS)
  #slowServed = 0
  // a wake-up for each rate-limited endpoint given back until its next send's time, rather than the next poll
  readonly #wakeTimers = new Map<number, NodeJS.Timeout>()
  // each rate-limited endpoint's next send's time (performance.now()) while still ahead: a turn on this instance starts from
  // it, to the millisecond, rather than from the store's lease, which counts whole milliseconds of the wall clock
  readonly #nextSends = new Map<number, number>()
  // endpoints whose lease the store failed to take back at the end of their turn: tried again (#giveBack)
  readonly #giveBackTimers = new Map<number, NodeJS.Timeout>()

  constructor (options: DispatcherOptions) {
    this.#options = options
    this.#leaseMs = 2 * options.settings.timeoutMs + 5_000
    this.#failingSlots = Math.max(1, Math.floor(options.settings.concurrency / 2))
    this.#loop = new BackgroundLoop({
      name: 'webhook_delivery',
      intervalMs: options.settings.pollIntervalMs,
      concurrency: options.settings.concurrency,
      stopGraceMs: WEBHOOK_STOP_GRACE_MS,
      pass: async (signal, yieldSlot) => await this.#serveNext(signal, yieldSlot),
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
    for (const timer of [...this.#wakeTimers.values(), ...this.#giveBackTimers.values()]) clearTimeout(timer)
    this.#wakeTimers.clear()
    this.#giveBackTimers.clear()
    this.#nextSends.clear()
    await this.#loop.stop()
    await this.#options.sender.close()
  }

  /** One pass: takes one endpoint with work and serves it; true when it found one (there may be more). */
  async #serveNext (signal: AbortSignal, yieldSlot: () => void): Promise<boolean> {
    const { store, clock, log } = this.#options
    if (clock.now() < this.#pausedUntil) return false
    // a failing endpoint's slot is reserved before the claim, not counted after it: slots claiming at once
    // would each see the room free and all take failing endpoints
    const mayTakeFailing = this.#failingServed < this.#failingSlots
    if (mayTakeFailing) this.#failingServed++
    let claim: ClaimedWebhookEndpoint | undefined
    try {
      claim = await store.claimWebhookEndpoint(new Date(clock.now()), this.#leaseMs, randomBytes(12).toString('base64url'), mayTakeFailing)
    } finally {
      if (mayTakeFailing && (claim === undefined || claim.failingSince === null)) this.#failingServed--
    }
    if (claim === undefined) return false
    // another slot looks for the next endpoint meanwhile
    this.#loop.wake()
    const failing = claim.failingSince !== null
    let slow = false
    let served = false
    const onSlow = (): void => {
      if (slow || served || this.#slowServed >= this.#options.settings.concurrency) return
      slow = true
      this.#slowServed++
      yieldSlot()
      this.#loop.wake()
    }
    try {
      await this.#serve(claim, signal, onSlow)
    } catch (error) {
      log.warn({ err: error, endpointId: claim.id }, 'webhook delivery to an endpoint stopped on a store error; the endpoint is taken again once the store answers')
    } finally {
      served = true
      if (failing) this.#failingServed--
      if (slow) this.#slowServed--
    }
    return true
  }

  /** Wakes the loop in `ms`, when the endpoint may be taken again (its rate limit's next send). */
  #wakeFor (endpointId: number, ms: number): void {
    if (this.#stopping) return
    clearTimeout(this.#wakeTimers.get(endpointId))
    this.#wakeTimers.set(endpointId, setTimeout(() => {
      this.#wakeTimers.delete(endpointId)
      this.#loop.wake()
    }, ms).unref())
  }

  /**
   * Gives the endpoint's lease back, the endpoint claimable from `until` on. When the store fails that (SQLite's write lock
   * held past its busy timeout by another process, a CLI command say; a PostgreSQL failover), it is tried again every
   * {@link GIVE_BACK_RETRY_MS} until it succeeds or the lease has ended anyway: the endpoint is not left held, with no attempt
   * in flight, for the rest of its lease (2 × `WEBHOOK_TIMEOUT_MS` + 5 s). Still throws: the turn ended on a store error.
   */
  async #giveBack (claim: ClaimedWebhookEndpoint, until: Date): Promise<void> {
    try {
      await this.#options.store.releaseWebhookEndpoint(claim, until)
    } catch (error) {
      this.#giveBackLater(claim, until, this.#options.clock.now() + this.#leaseMs)
      throw error
    }
  }

  #giveBackLater (claim: ClaimedWebhookEndpoint, until: Date, leaseEnds: number): void {
    if (this.#stopping || this.#options.clock.now() + GIVE_BACK_RETRY_MS >= leaseEnds) return
    clearTimeout(this.#giveBackTimers.get(claim.id))
    this.#giveBackTimers.set(claim.id, setTimeout(() => {
      this.#giveBackTimers.delete(claim.id)
      // the lease's token is checked: a no-op when the lease ended and another took the endpoint meanwhile
      this.#options.store.releaseWebhookEndpoint(claim, until).then(() => { this.#loop.wake() }, () => { this.#giveBackLater(claim, until, leaseEnds) })
    }, GIVE_BACK_RETRY_MS).unref())
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
   * flight: when half of them are answered, their outcomes are recorded (one transaction) and as many more are
   * sent, so a slow receiver is kept busy rather than waited for batch by batch. It stops sending when none is
   * due, one fails, its turn ends, or the dispatcher stops, and returns once those in flight are answered and
   * recorded. A receiver that asked to be left alone (429, 502-504, Retry-After) gets the lease back only from
   * then on: none of its deliveries before. An endpoint with a rate limit is sent one delivery at a time, starts
   * `sendSpacingMs` apart (a little more than 1/rateLimit s) whatever its answers (those not yet answered stay in
   * flight), and is given back until its next send's time: however the turns fall, on whichever instance, no
   * second sees more starts than it asked for.
   * `onSlow`: an attempt has been unanswered for {@link WEBHOOK_SLOW_ATTEMPT_MS}, or the rate limit makes it wait.
   */
  async #serve (claim: ClaimedWebhookEndpoint, signal: AbortSignal, onSlow: () => void): Promise<void> {
    const { store, clock, settings } = this.#options
    const turnEnds = clock.now() + TURN_MS
    const inFlight = new Map<number, Promise<void>>()
    const answered: Array<{ eventId: number, outcome: WebhookAttemptOutcome }> = []
    // a rate limit sends one at a time, spaced: real time (performance.now()), whatever clock the leases read
    const spacingMs = claim.rateLimit === null ? 0 : sendSpacingMs(claim.rateLimit)
    const paceEnds = performance.now() + TURN_MS
    let nextSendAt = this.#nextSends.get(claim.id) ?? 0
    this.#nextSends.delete(claim.id)
    let lastDispatch = Promise.resolve()
    const refillAt = spacingMs > 0 ? 1 : Math.ceil(settings.endpointConcurrency / 2)
    let sent = 0
    let waitUntil = 0
    // no more attempts this turn (those in flight are still answered and recorded)
    let done = false
    const record = async (): Promise<void> => {
      if (answered.length > 0) await store.recordWebhookAttempts(claim, answered.splice(0), new Date(clock.now()))
    }
    try {
      await store.scheduleWebhookDeliveries(claim, SCHEDULE_BATCH)
      for (;;) {
        const room = settings.endpointConcurrency - inFlight.size
        if (!done && (inFlight.size === 0 || room >= refillAt)) {
          await record()
          // paced by the endpoint's rate limit: a send whose time falls after the turn waits for the next turn
          if (this.#stopping || sent >= TURN_DELIVERIES || clock.now() >= turnEnds || nextSendAt >= paceEnds) done = true
          else {
            // those in flight, and those answered while this was recorded, are still queued: asked for beside the room, then left out
            const taken = new Set([...inFlight.keys(), ...answered.map(({ eventId }) => eventId)])
            const wanted = spacingMs > 0 ? 1 : room
            const limit = wanted + taken.size
            const due = await store.nextDueWebhookDeliveries(claim, new Date(clock.now()), this.#leaseMs, limit)
            if (due.length < limit) done = true
            // more may have been answered meanwhile: as many sent as there is room for now
            const sending = due.filter(({ eventId }) => !taken.has(eventId)).slice(0, Math.min(wanted, settings.endpointConcurrency - inFlight.size))
            // the wait for the rate's next send comes last, right before the send, and counts from when the one before reached
            // its connection (its first attempt loads modules first): the time the receiver sees between two is never shorter
            if (sending.length > 0 && spacingMs > 0) {
              await lastDispatch
              if (performance.now() < nextSendAt) {
                if (nextSendAt - performance.now() >= PACE_YIELD_MS) onSlow()
                await sleepUntil(nextSendAt, signal)
                if (signal.aborted) continue
              }
            }
            for (const delivery of sending) {
              sent++
              let dispatched = (): void => {}
              lastDispatch = new Promise<void>((resolve) => { dispatched = resolve })
              const onDispatch = (): void => {
                if (spacingMs > 0) nextSendAt = performance.now() + spacingMs
                dispatched()
              }
              const slowTimer = setTimeout(onSlow, WEBHOOK_SLOW_ATTEMPT_MS)
              inFlight.set(delivery.eventId, this.#attempt(claim, delivery, signal, onDispatch).then((made) => {
                // one cut off by shutdown is not an answer of the endpoint: it stays due and is retried
                if (made === undefined || !made.outcome.delivered) done = true
                if (made === undefined) return
                answered.push({ eventId: delivery.eventId, outcome: made.outcome })
                waitUntil = Math.max(waitUntil, made.waitUntil ?? 0)
              }).finally(() => {
                // one refused before it was sent was never dispatched: nothing to wait for
                dispatched()
                clearTimeout(slowTimer)
                inFlight.delete(delivery.eventId)
              }))
            }
            // answers that came while this refill ran may have left room for more: look again before waiting
            if (sending.length > 0) continue
          }
        }
        if (inFlight.size === 0) break
        await Promise.race(inFlight.values())
      }
      await record()
    } finally {
      // after a store error: the attempts in flight end before the lease is given back (their outcomes unrecorded: sent again)
      await Promise.allSettled(inFlight.values())
      // a rate-limited endpoint is not taken again before its next send's time, by this instance (woken then) or another
      const nextSend = wallTimeOf(nextSendAt, () => clock.now())
      if (nextSendAt > performance.now()) this.#nextSends.set(claim.id, nextSendAt)
      await this.#giveBack(claim, new Date(Math.max(clock.now(), waitUntil, nextSend)))
      if (nextSend > clock.now() && nextSend >= waitUntil) this.#wakeFor(claim.id, nextSend - clock.now())
    }
  }

  /**
   * One attempt and what it came to; `waitUntil`: the receiver asked to be left alone until then. Undefined when cut off
   * by shutdown. `onDispatch`: the request is handed to its connection.
   */
  async #attempt (claim: ClaimedWebhookEndpoint, due: DueWebhookDelivery, signal: AbortSignal, onDispatch: () => void): Promise<{ outcome: WebhookAttemptOutcome, waitUntil?: number } | undefined> {
    const { sender, clock, log, webhookMetrics: metrics, serializeEvent } = this.#options
    const attempt = due.attempts + 1
    const context = { endpointId: claim.id, eventId: due.eventId, attempt }
    if (due.event === undefined) {
      log.warn(context, 'webhook delivery given up: its event is no longer retained')
      metrics.deliveries.inc({ outcome: 'failed', endpoint_id: String(claim.id) })
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
        const message = { endpointId: claim.id, url: claim.url, id: String(event.id), body: serializeEvent(event), secrets: claim.secrets }
        const sent = await sender.post(message, new Date(started), signal, onDispatch)
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
      metrics.deliveries.inc({ outcome: 'delivered', endpoint_id: String(claim.id) })
      metrics.deliveryDuration.observe({ outcome: 'delivered' }, seconds)
      metrics.deliveryLag.observe(Math.max(0, now - Date.parse(event.occurredAt)) / 1000)
      return { outcome: { ...made, delivered: true } }
    }
    const decision = decideRetry(result, attempt, this.#options.settings.retryScheduleMs, now, Math.random())
    const retryAt = decision.retryAt === undefined ? undefined : new Date(decision.retryAt)
    // 410 Gone: the receiver says the endpoint is no more
    const disable = decision.disable || (claim.failingSince !== null && now - claim.failingSince >= WEBHOOK_DISABLE_AFTER_MS)
    const outcome = retryAt === undefined ? 'failed' : 'retrying'
    const fields = { ...context, error: result.error, retryAt: retryAt?.toISOString(), disabled: disable, durationMs: now - started }
    if (disable) {
      // an operator has to act: nothing is sent to the endpoint until `webhooks enable`
      const url = webhookUrlForLog(claim.url)
      const why = decision.disable ? 'it answered 410 Gone' : `its attempts have failed for ${WEBHOOK_DISABLE_AFTER_MS / 86_400_000} days`
      log.warn({ ...fields, url }, `webhook endpoint ${claim.id} (${url}) disabled: ${why}; its deliveries wait for webhooks enable ${claim.id}` +
        (outcome === 'failed' ? ' (this one is given up: the retry schedule is exhausted)' : ''))
    } else {
      log[outcome === 'failed' ? 'warn' : 'info'](fields,
        outcome === 'failed' ? 'webhook delivery failed for good: the retry schedule is exhausted' : 'webhook delivery failed; retrying later')
    }
    metrics.deliveries.inc({ outcome, endpoint_id: String(claim.id) })
    metrics.deliveryDuration.observe({ outcome }, seconds)
    return { outcome: { ...made, delivered: false, error: result.error, retryAt, disable }, ...(decision.endpointWaitsUntil === undefined ? {} : { waitUntil: decision.endpointWaitsUntil }) }
  }
}
