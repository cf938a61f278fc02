import { setImmediate as yieldTurn } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop } from '../../infra/background/background-loop.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { Clock } from '../../infra/runtime/clock.js'
import type { EventPurge, EventStore } from './store/event-store.js'

/** How often every instance deletes expired events. */
export const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000
// rows deleted per transaction: a long backlog (after downtime) never holds a write lock for long
const PURGE_BATCH_SIZE = 1000
const DAY_MS = 86_400_000

/**
 * Deletes the events older than the retention period, at start and then every
 * {@link EVENT_RETENTION_INTERVAL_MS} until {@link stop}: one batch a pass, the next at once while
 * batches come back full, so a long backlog never holds the event loop (SQLite's calls are
 * synchronous) nor the write lock for long. Every instance runs it: a purge deletes each row once
 * however many run at once, so no instance needs to be elected.
 */
export class EventRetention {
  readonly #events: EventStore
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger
  readonly #retentionMs: number
  readonly #loop: BackgroundLoop
  // what the consecutive full batches deleted so far: one log line for them all when they end
  #run: EventPurge = { deleted: 0, purgedThrough: 0 }

  constructor (events: EventStore, clock: Clock, log: FastifyBaseLogger, retentionDays: number, metrics: Metrics) {
    this.#events = events
    this.#clock = clock
    this.#log = log
    this.#retentionMs = retentionDays * DAY_MS
    this.#loop = new BackgroundLoop({
      name: 'event_retention',
      intervalMs: EVENT_RETENTION_INTERVAL_MS,
      pass: async () => (await this.#purgeBatch()) === undefined,
      onError: (error) => { this.#log.warn({ err: error }, 'could not delete expired events; trying again later') },
      metrics
    })
  }

  /** Deletes every expired event now, a batch per transaction; returns how many (a run of the loop's in progress is joined, and counted in). */
  async purge (): Promise<number> {
    for (;;) {
      const deleted = await this.#purgeBatch()
      if (deleted !== undefined) return deleted
      await yieldTurn()
    }
  }

  start (): void {
    this.#loop.start()
  }

  /** Purges no more: a batch in flight is awaited, the rest left to the next start; resolves once nothing touches the store. */
  async stop (): Promise<void> {
    await this.#loop.stop()
    this.#endRun()
  }

  /** Deletes one batch; when it was the run's last (not full), logs the run and returns its total, else undefined. */
  async #purgeBatch (): Promise<number | undefined> {
    const { deleted, purgedThrough } = await this.#events.purgeEventsBefore(new Date(this.#clock.now() - this.#retentionMs), PURGE_BATCH_SIZE)
    this.#run = { deleted: this.#run.deleted + deleted, purgedThrough }
    return deleted === PURGE_BATCH_SIZE ? undefined : this.#endRun()
  }

  #endRun (): number {
    const { deleted, purgedThrough } = this.#run
    if (deleted > 0) this.#log.info({ deleted, purgedThrough }, 'deleted expired events')
    this.#run = { deleted: 0, purgedThrough: 0 }
    return deleted
  }
}
