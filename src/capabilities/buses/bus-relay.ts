import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop, MAX_STOP_GRACE_MS } from '../../infra/background/background-loop.js'
import type { BackgroundWork } from '../../infra/background/background-work.js'
import type { Database } from '../../infra/database/database.js'
import { watchRecordedEvents } from '../../infra/database/watch-recorded-events.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { Clock } from '../../infra/runtime/clock.js'
import type { Event, EventStore } from '../events/index.js'
import type { Bus, BusMessage } from './bus.js'
import type { BusMetrics } from './bus-metrics.js'
import type { BusLease, BusPositionStore } from './store/bus-position-store.js'

/** Events read and published per pass at most: a batch pipelined to the broker, acknowledged, then one write of the position. */
export const BUS_BATCH_SIZE = 500
/**
 * How long a relay's lease lasts unless renewed (each batch renews it before it is published): a dead instance's
 * bus is taken over this long after its last batch, and every batch ends {@link BUS_LEASE_MARGIN_MS} before it.
 */
export const BUS_LEASE_MS = 4_000
/** A batch ends this long before its lease does: room for the position's write, and for clocks a little apart. */
export const BUS_LEASE_MARGIN_MS = 250
/** The fallback poll: commits wake the relay at once, this finds a broker back. */
export const BUS_POLL_INTERVAL_MS = 1_000
/**
 * A relay that failed lately takes a free bus only once it has seen it free, with events waiting, for this long:
 * a healthy instance, woken by the commit or its poll, takes it first.
 */
export const FAILED_RELAY_DEFERS_MS = 1_500
// after a failure, no attempt for this long, doubling up to the most: a broker down costs a connection attempt per few seconds
const FIRST_RETRY_MS = 250
const MOST_RETRY_MS = 5_000

/** Which instance publishes, as the CLI shows it: the host and the process. */
export const INSTANCE_NAME = `${hostname()}:${process.pid}`

export interface BusRelayOptions {
  bus: Bus
  positions: BusPositionStore
  events: EventStore
  /** Whose commits wake the relay (watchRecordedEvents). */
  database: Database
  toMessage: (event: Event) => BusMessage
  clock: Clock
  log: FastifyBaseLogger
  /** The background loop's metrics. */
  metrics: Metrics
  busMetrics: BusMetrics
}

/**
 * Relays the change feed to one bus, on every instance at once and safely: the one holding the bus's lease reads
 * the events after the bus's position in id order, publishes them (a batch pipelined, every message
 * acknowledged, the whole batch ended before the lease would), and only then advances the position in the store
 * (at least once: a crash between the two publishes the batch again, which JetStream drops by `Nats-Msg-Id` and a
 * RabbitMQ consumer by `message_id`). A relay that fails gives the lease up, so another instance publishes while
 * it backs off; a dead holder's lease runs out after {@link BUS_LEASE_MS}, and an instance waiting on it looks
 * again the moment it ends. Woken by every commit that records events; polls as the fallback. A bus behind
 * retention skips what retention deleted, logged as an error and counted.
 */
export class BusRelay implements BackgroundWork {
  readonly #options: BusRelayOptions
  readonly #loop: BackgroundLoop
  readonly #token = randomBytes(12).toString('base64url')
  // this instance's lease, as it last wrote it (0: not held)
  #leaseUntil = 0
  #retryAt = 0
  #retryMs = FIRST_RETRY_MS
  // failures since the last batch acknowledged: while any, this relay defers to healthy instances
  #failures = 0
  // halved when a batch cannot be acknowledged within its lease, grown back after each that is
  #batchSize = BUS_BATCH_SIZE
  // since when (monotonic ms) this relay has seen the bus free with events waiting, while it defers
  #seenFreeAt: number | undefined
  // the holder whose lease this relay last said it waits on: logged once per holder
  #waitedOn: string | undefined
  #wakeAt: NodeJS.Timeout | undefined
  #unwatch: (() => void) | undefined
  #ensured = false

  constructor (options: BusRelayOptions) {
    this.#options = options
    this.#loop = new BackgroundLoop({
      name: `bus_${options.bus.name}`,
      intervalMs: BUS_POLL_INTERVAL_MS,
      stopGraceMs: MAX_STOP_GRACE_MS,
      pass: async (signal) => await this.#pass(signal),
      onError: (error) => { this.#failed(error) },
      metrics: options.metrics
    })
  }

  start (): void {
    this.#loop.start()
    this.#unwatch ??= watchRecordedEvents(this.#options.database, () => { this.#loop.wake() })
  }

  /** Publishes no more (a batch in flight gets the loop's grace, then is cut off unacknowledged: published again later), gives the lease back and closes the connection. */
  async stop (): Promise<void> {
    this.#unwatch?.()
    clearTimeout(this.#wakeAt)
    await this.#loop.stop()
    const { bus, positions, clock } = this.#options
    if (this.#leaseUntil > 0) await positions.releaseBus(bus.name, this.#token, clock.now()).catch(() => {})
    await bus.close()
  }

  /** One batch: true when more may wait. */
  async #pass (signal: AbortSignal): Promise<boolean> {
    const { bus, positions, events, clock } = this.#options
    // the back-off on the monotonic clock: a wall clock that jumps (NTP, a test's) neither skips nor stretches it
    if (performance.now() < this.#retryAt) return false
    const now = clock.now()
    if (!this.#ensured) {
      await positions.ensureBus(bus.name)
      this.#ensured = true
    }
    const found = await positions.findBus(bus.name)
    if (found === undefined || found.oldestWaitingAt === undefined) {
      this.#seenFreeAt = undefined
      return false
    }
    if (!this.#mayPublish(found, now)) return false
    const position = found.publishedThrough
    const page = await events.listEvents({ afterId: position, limit: this.#batchSize })
    if (page.events.length === 0 && position >= page.purgedThrough) return false
    const through = Math.max(position, page.events.at(-1)?.id ?? position)
    const leaseUntil = await positions.beginBatch(bus.name, this.#token, INSTANCE_NAME, position, through, now, BUS_LEASE_MS)
    // another instance took the lease, or moved the position since it was read: look again
    if (leaseUntil === undefined) {
      this.#leaseUntil = 0
      return true
    }
    this.#leaseUntil = leaseUntil
    this.#waitedOn = undefined
    this.#seenFreeAt = undefined
    if (position < page.purgedThrough) {
      await this.#skipPastRetention(position, page.purgedThrough)
      return true
    }
    await this.#publish(page.events, found.attemptedThrough, leaseUntil, signal)
    return page.events.length === this.#batchSize
  }

  /** Whether this relay may publish now: the lease is free or its own, and a relay that failed lately lets a healthy one go first. */
  #mayPublish (found: BusLease, now: number): boolean {
    const leaseUntil = found.leaseUntil ?? 0
    if (found.leaseToken !== undefined && found.leaseToken !== this.#token && leaseUntil > now) {
      this.#seenFreeAt = undefined
      this.#waitOn(found.leaseHolder ?? 'another instance', leaseUntil, now)
      return false
    }
    if (this.#failures === 0 || found.leaseToken === this.#token) return true
    // on the monotonic clock: the wall clock may jump, and another instance's may differ
    this.#seenFreeAt ??= performance.now()
    const deferredFor = performance.now() - this.#seenFreeAt
    if (deferredFor >= FAILED_RELAY_DEFERS_MS) return true
    this.#wakeIn(FAILED_RELAY_DEFERS_MS - deferredFor)
    return false
  }

  /** Another instance holds the lease: said once per holder, and looked at again the moment its lease ends. */
  #waitOn (holder: string, leaseUntil: number, now: number): void {
    if (this.#waitedOn !== holder) {
      this.#waitedOn = holder
      this.#options.log.info({ bus: this.#options.bus.name, holder, leaseUntil: new Date(leaseUntil).toISOString() },
        `bus ${this.#options.bus.name}: ${holder} holds the lease until ${new Date(leaseUntil).toISOString()}; this instance publishes if it ends unrenewed`)
    }
    this.#wakeIn(leaseUntil - now)
  }

  #wakeIn (ms: number): void {
    clearTimeout(this.#wakeAt)
    this.#wakeAt = setTimeout(() => { this.#loop.wake() }, Math.max(0, ms) + 10)
    this.#wakeAt.unref()
  }

  /** Publishes `events` within the lease, then moves the position past them. */
  async #publish (events: readonly Event[], attemptedThrough: number, leaseUntil: number, signal: AbortSignal): Promise<void> {
    const { bus, positions, toMessage, clock, log, busMetrics } = this.#options
    const budgetMs = leaseUntil - BUS_LEASE_MARGIN_MS - clock.now()
    const batch = cutAt(signal, budgetMs)
    let outcome
    try {
      outcome = await bus.publish(events.map(toMessage), batch.signal)
    } catch (error) {
      if (!batch.leaseEnded() || signal.aborted) throw error
      // a broker too slow for a whole batch within the lease gets smaller ones
      this.#batchSize = Math.max(1, Math.floor(this.#batchSize / 2))
      throw new Error(`the broker did not acknowledge ${events.length} events within the lease (${Math.round(budgetMs)} ms): the next batches are of ${this.#batchSize}`)
    } finally {
      batch.done()
    }
    const acknowledged = clock.now()
    const last = events.at(-1) as Event
    if (!await positions.advanceBus(bus.name, this.#token, last.id, acknowledged, BUS_LEASE_MS)) {
      this.#leaseUntil = 0
      log.warn({ bus: bus.name }, `bus ${bus.name}: the lease was taken over while publishing: the other instance publishes on`)
      return
    }
    this.#leaseUntil = acknowledged + BUS_LEASE_MS
    this.#retryMs = FIRST_RETRY_MS
    this.#failures = 0
    this.#batchSize = Math.min(BUS_BATCH_SIZE, this.#batchSize * 2)
    busMetrics.published.inc({ bus: bus.name }, events.length)
    const lag = busMetrics.publishLag.labels({ bus: bus.name })
    for (const event of events) lag.observe(Math.max(0, acknowledged - Date.parse(event.occurredAt)) / 1000)
    const foreign = outcome.duplicates.filter(({ eventId }) => eventId > attemptedThrough)
    if (foreign.length > 0) await this.#reportForeignDuplicates(foreign, acknowledged)
  }

  /**
   * The broker held message ids this deployment never published: another deployment publishes under its identity
   * (a copied database), and these events are not in the stream as this deployment wrote them.
   */
  async #reportForeignDuplicates (foreign: readonly BusMessage[], now: number): Promise<void> {
    const { bus, positions, log, busMetrics } = this.#options
    const ids = foreign.map(({ eventId }) => eventId)
    const message = `the broker already held ${ids.length} event(s) this deployment had never published (ids ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''}): ` +
      'another deployment publishes under the same identity (a copy of this database?), and these events were dropped as its duplicates'
    busMetrics.foreignDuplicates.inc({ bus: bus.name }, ids.length)
    log.error({ bus: bus.name, eventIds: ids }, `bus ${bus.name}: ${message}`)
    await positions.recordBusFailure(bus.name, this.#token, message.slice(0, 500), now)
  }

  /** Retention deleted events this bus had not published: say so loudly, and go on after them. */
  async #skipPastRetention (position: number, purgedThrough: number): Promise<void> {
    const { bus, positions, clock, log, busMetrics } = this.#options
    const now = clock.now()
    if (!await positions.advanceBus(bus.name, this.#token, purgedThrough, now, BUS_LEASE_MS)) return
    const message = `events after ${position} up to ${purgedThrough} were deleted by retention before they were published: skipped`
    await positions.recordBusFailure(bus.name, this.#token, message, now)
    busMetrics.retentionSkips.inc({ bus: bus.name })
    log.error({ bus: bus.name, position, purgedThrough }, `bus ${bus.name}: ${message}`)
  }

  /**
   * A pass failed (the broker, or the store): logged (one line, no stack) and recorded, the lease given back so
   * that another instance publishes meanwhile, and the next attempt waits, longer each time.
   */
  #failed (error: unknown): void {
    const { bus, positions, clock, log, busMetrics } = this.#options
    const now = clock.now()
    this.#failures++
    this.#retryAt = performance.now() + this.#retryMs
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500)
    const held = this.#leaseUntil > 0
    log.warn({ bus: bus.name, error: message, failures: this.#failures },
      `could not publish to ${bus.description}: ${message}; ${held ? 'gave the lease up so that another instance publishes; ' : ''}` +
      `trying again in ${this.#retryMs} ms, once no other instance has taken the bus`)
    this.#retryMs = Math.min(MOST_RETRY_MS, this.#retryMs * 2)
    busMetrics.failures.inc({ bus: bus.name })
    if (!held) return
    this.#leaseUntil = 0
    busMetrics.leaseHandovers.inc({ bus: bus.name })
    positions.recordBusFailure(bus.name, this.#token, message, now)
      .then(async () => { await positions.releaseBus(bus.name, this.#token, now) })
      .catch(() => {})
  }
}

/**
 * A signal that aborts when `signal` does or `ms` have passed (the lease is ending), whichever comes first. Made by
 * hand: Node 20's `AbortSignal.any` over `AbortSignal.timeout` could fail to fire once the timeout signal was
 * collected, leaving a batch to the broker's own time limits.
 */
function cutAt (signal: AbortSignal, ms: number): { signal: AbortSignal, leaseEnded: () => boolean, done: () => void } {
  const controller = new AbortController()
  let ended = false
  const timer = setTimeout(() => {
    ended = true
    controller.abort(new Error('the lease is ending'))
  }, Math.max(0, ms))
  const onStop = (): void => { controller.abort(signal.reason) }
  if (signal.aborted) onStop()
  else signal.addEventListener('abort', onStop, { once: true })
  return {
    signal: controller.signal,
    leaseEnded: () => ended,
    done: () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onStop)
    }
  }
}
