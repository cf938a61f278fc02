import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../infra/runtime/clock.js'
import type { EventStore } from './store/event-store.js'

/** How often every instance deletes expired events. */
export const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000
// rows deleted per transaction: a long backlog (after downtime) never holds a write lock for long
const PURGE_BATCH_SIZE = 1000
const DAY_MS = 86_400_000

/**
 * Deletes the events older than the retention period, now and then every
 * {@link EVENT_RETENTION_INTERVAL_MS} until {@link stop}. Every instance runs it: a purge deletes each
 * row once however many run at once, so no instance needs to be elected.
 */
export class EventRetention {
  readonly #events: EventStore
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger
  readonly #retentionMs: number
  #timer: NodeJS.Timeout | undefined
  #first: NodeJS.Immediate | undefined
  #running: Promise<number> | undefined
  #stopped = false

  constructor (events: EventStore, clock: Clock, log: FastifyBaseLogger, retentionDays: number) {
    this.#events = events
    this.#clock = clock
    this.#log = log
    this.#retentionMs = retentionDays * DAY_MS
  }

  /** Deletes every expired event now, a batch per transaction; returns how many. A pass already running is joined, not doubled. */
  async purge (): Promise<number> {
    this.#running ??= this.#purgeAll().finally(() => { this.#running = undefined })
    return await this.#running
  }

  async #purgeAll (): Promise<number> {
    const cutoff = new Date(this.#clock.now() - this.#retentionMs)
    let total = 0
    for (;;) {
      const { deleted, purgedThrough } = await this.#events.purgeEventsBefore(cutoff, PURGE_BATCH_SIZE)
      total += deleted
      if (deleted < PURGE_BATCH_SIZE || this.#stopped) {
        if (total > 0) this.#log.info({ deleted: total, purgedThrough }, 'deleted expired events')
        return total
      }
    }
  }

  start (): void {
    const purge = (): void => {
      this.purge().catch((error: unknown) => {
        if (!this.#stopped) this.#log.warn({ err: error }, 'could not delete expired events; trying again later')
      })
    }
    this.#timer = setInterval(purge, EVENT_RETENTION_INTERVAL_MS).unref()
    this.#first = setImmediate(purge)
  }

  /** Stops the timer and waits for a pass in progress, so the store is not closed under it. */
  async stop (): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    clearImmediate(this.#first)
    await this.#running?.catch(() => {})
  }
}
