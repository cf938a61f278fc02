import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop } from '../../infra/background/background-loop.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { Clock } from '../../infra/runtime/clock.js'
import { IDEMPOTENCY_SWEEP_INTERVAL_MS } from './policy.js'

/** The one store call expiry needs. */
export interface ExpiredIdempotencyKeys {
  /** Deletes the records that expired by `now`; returns how many. */
  deleteExpiredIdempotencyKeys (now: Date): Promise<number>
}

/**
 * Deletes expired Idempotency-Key records at start and then every {@link IDEMPOTENCY_SWEEP_INTERVAL_MS}
 * until {@link stop}. Every instance runs it: a record is deleted once however many sweep at once.
 */
export class IdempotencyExpiry {
  readonly #store: ExpiredIdempotencyKeys
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger
  readonly #loop: BackgroundLoop

  constructor (store: ExpiredIdempotencyKeys, clock: Clock, log: FastifyBaseLogger, metrics: Metrics) {
    this.#store = store
    this.#clock = clock
    this.#log = log
    this.#loop = new BackgroundLoop({
      name: 'idempotency_expiry',
      intervalMs: IDEMPOTENCY_SWEEP_INTERVAL_MS,
      pass: async () => {
        const deleted = await this.sweep()
        if (deleted > 0) this.#log.debug({ deleted }, 'deleted expired Idempotency-Key records')
        return false
      },
      onError: (error) => { this.#log.warn({ err: error }, 'could not delete expired Idempotency-Key records; trying again later') },
      metrics
    })
  }

  /** Deletes expired records now; returns how many. */
  async sweep (): Promise<number> {
    return this.#store.deleteExpiredIdempotencyKeys(new Date(this.#clock.now()))
  }

  start (): void {
    this.#loop.start()
  }

  /** Sweeps no more; resolves once a sweep in flight has ended, so the store can be closed. */
  async stop (): Promise<void> {
    await this.#loop.stop()
  }
}
