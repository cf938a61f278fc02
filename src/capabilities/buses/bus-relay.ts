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
import type { BusPositionStore } from './store/bus-position-store.js'

/** Events read and published per pass: a batch pipelined to the broker, acknowledged, then one write of the position. */
export const BUS_BATCH_SIZE = 500
/**
 * How long a relay's lease lasts unless renewed (each batch renews it): a dead instance's bus is taken over by
 * another this long after its last batch. Well above a batch's longest wait (bus.ts's `BROKER_TIMEOUT_MS` to
 * connect and as long to be acknowledged), so a live holder never loses it while publishing.
 */
export const BUS_LEASE_MS = 15_000
/** The fallback poll: commits wake the relay at once, this finds a lease ended and a broker back. */
export const BUS_POLL_INTERVAL_MS = 1_000
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
  metrics: Metrics
}

/**
 * Relays the change feed to one bus, on every instance at once and safely: the one holding the bus's lease reads
 * the events after the bus's position in id order, publishes them (a batch pipelined, every message
 * acknowledged), and only then advances the position in the store (at least once: a crash between the two
 * publishes the batch again, which JetStream drops by `Nats-Msg-Id` and a RabbitMQ consumer by `message_id`).
 * Another instance takes the bus over when the lease runs out. Woken by every commit that records events;
 * polls as the fallback. A broker down or refusing costs the API nothing: the relay retries, backing off, and
 * the backlog waits in the outbox. A bus behind retention skips what retention deleted, logged as an error and
 * counted (`petstore_bus_retention_skips_total`).
 */
export class BusRelay implements BackgroundWork {
  readonly #options: BusRelayOptions
  readonly #loop: BackgroundLoop
  readonly #token = randomBytes(12).toString('base64url')
  // this instance's lease, as it last wrote it (0: not held)
  #leaseUntil = 0
  #retryAt = 0
  #retryMs = FIRST_RETRY_MS
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
    await this.#loop.stop()
    const { bus, positions, clock } = this.#options
    if (this.#leaseUntil > 0) await positions.releaseBus(bus.name, this.#token, clock.now()).catch(() => {})
    await bus.close()
  }

  /** One batch: true when it was full (more may wait). */
  async #pass (signal: AbortSignal): Promise<boolean> {
    const { bus, positions, events, toMessage, clock, metrics } = this.#options
    // the back-off on the monotonic clock: a wall clock that jumps (NTP, a test's) neither skips nor stretches it
    if (performance.now() < this.#retryAt) return false
    const now = clock.now()
    if (!this.#ensured) {
      await positions.ensureBus(bus.name)
      this.#ensured = true
    }
    const found = await positions.findBus(bus.name)
    if (found === undefined || !found.waiting) return false
    let position = found.publishedThrough
    // renewed ahead of time, so the lease never runs out during a batch
    if (this.#leaseUntil - now < BUS_LEASE_MS / 2) {
      if (found.leaseToken !== this.#token && found.leaseUntil !== undefined && found.leaseUntil > now) return false
      const claimed = await positions.claimBus(bus.name, this.#token, INSTANCE_NAME, now, BUS_LEASE_MS)
      if (claimed === undefined) {
        this.#leaseUntil = 0
        return false
      }
      this.#leaseUntil = now + BUS_LEASE_MS
      position = claimed
    }
    const page = await events.listEvents({ afterId: position, limit: BUS_BATCH_SIZE })
    if (position < page.purgedThrough) {
      await this.#skipPastRetention(position, page.purgedThrough)
      return true
    }
    const last = page.events.at(-1)
    if (last === undefined) return false
    await bus.publish(page.events.map(toMessage), signal)
    const acknowledged = clock.now()
    if (!await positions.advanceBus(bus.name, this.#token, last.id, acknowledged, BUS_LEASE_MS)) {
      this.#leaseUntil = 0
      this.#options.log.warn({ bus: bus.name }, 'the bus lease was taken over while publishing: the other instance publishes on')
      return false
    }
    this.#leaseUntil = acknowledged + BUS_LEASE_MS
    this.#retryMs = FIRST_RETRY_MS
    metrics.busPublished.inc({ bus: bus.name }, page.events.length)
    const lag = metrics.busPublishLag.labels({ bus: bus.name })
    for (const event of page.events) lag.observe(Math.max(0, acknowledged - Date.parse(event.occurredAt)) / 1000)
    return page.events.length === BUS_BATCH_SIZE
  }

  /** Retention deleted events this bus had not published: say so loudly, and go on after them. */
  async #skipPastRetention (position: number, purgedThrough: number): Promise<void> {
    const { bus, positions, clock, log, metrics } = this.#options
    const now = clock.now()
    if (!await positions.advanceBus(bus.name, this.#token, purgedThrough, now, BUS_LEASE_MS)) return
    const message = `events after ${position} up to ${purgedThrough} were deleted by retention before they were published: skipped`
    await positions.recordBusFailure(bus.name, this.#token, message, now)
    metrics.busRetentionSkips.inc({ bus: bus.name })
    log.error({ bus: bus.name, position, purgedThrough }, `bus ${bus.name}: ${message}`)
  }

  /** A pass failed (the broker, or the store): logged and recorded, and the next attempt waits, longer each time. */
  #failed (error: unknown): void {
    const { bus, positions, clock, log, metrics } = this.#options
    const now = clock.now()
    this.#retryAt = performance.now() + this.#retryMs
    const message = error instanceof Error ? error.message : String(error)
    log.warn({ err: error, bus: bus.name }, `could not publish to ${bus.description}; trying again in ${this.#retryMs} ms`)
    this.#retryMs = Math.min(MOST_RETRY_MS, this.#retryMs * 2)
    metrics.busFailures.inc({ bus: bus.name })
    if (this.#leaseUntil > now) positions.recordBusFailure(bus.name, this.#token, message.slice(0, 500), now).catch(() => {})
  }
}
