import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop } from '../../infra/background/background-loop.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { Clock } from '../../infra/runtime/clock.js'
import type { EventStore } from './store/event-store.js'

/** How often every instance deletes expired events. */
export const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000
// rows deleted per transaction: a long backlog (after downtime) never holds a write lock for long
const PURGE_BATCH_SIZE = 1000
const DAY_MS = 86_400_000

/**
 * Deletes the events older than the retention period, at start and then every
 * {@link EVENT_RETENTION_INTERVAL_MS} until {@link stop}. Every instance runs it: a purge deletes each
 * row once however many run at once, so no instance needs to be elected.
 */
export class EventRetention {
  readonly #events: EventStore
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger
  readonly #retentionMs: number
  readonly #loop: BackgroundLoop
  #running: Promise<number> | undefined

  constructor (events: EventStore, clock: Clock, log: FastifyBaseLogger, retentionDays: number, metrics: Metrics) {
    this.#events = events
    this.#clock = clock
    this.#log = log
    this.#retentionMs = retentionDays * DAY_MS
    this.#loop = new BackgroundLoop({
      name: 'event_retention',
      intervalMs: EVENT_RETENTION_INTERVAL_MS,
      pass: async (signal) => { await this.#purgeOnce(signal); return false },
      onError: (error) => { this.#log.warn({ err: error }, 'could not delete expired events; trying again later') },
      metrics
    })
  }

  /** Deletes every expired event now, a batch per transaction; returns how many. A pass already running is joined, not doubled. */
  async purge (): Promise<number> {
    return await this.#purgeOnce()
  }

  start (): void {
    this.#loop.start()
  }

  /** Purges no more: a pass in flight ends after its current batch (the next pass deletes the rest); resolves once it has. */
  async stop (): Promise<void> {
    await this.#loop.stop()
    await this.#running?.catch(() => {})
  }

  async #purgeOnce (signal?: AbortSignal): Promise<number> {
    this.#running ??= this.#purgeAll(signal).finally(() => { this.#running = undefined })
    return await this.#running
  }

  async #purgeAll (signal: AbortSignal | undefined): Promise<number> {
    const cutoff = new Date(this.#clock.now() - this.#retentionMs)
    let total = 0
    for (;;) {
      const { deleted, purgedThrough } = await this.#events.purgeEventsBefore(cutoff, PURGE_BATCH_SIZE)
      total += deleted
      if (deleted < PURGE_BATCH_SIZE || signal?.aborted === true) {
        if (total > 0) this.#log.info({ deleted: total, purgedThrough }, 'deleted expired events')
        return total
      }
    }
  }
}
