import { LRUCache } from 'lru-cache'
import type { Clock } from '../../infra/runtime/clock.js'

/** A key's count in its current window, and how long that window still lasts. */
export interface WindowCount {
  current: number
  ttlMs: number
}

// as many keys as @fastify/rate-limit's own in-memory store keeps
const MAX_COUNTED_KEYS = 5000

/**
 * Fixed windows counted in this process, as @fastify/rate-limit's in-memory store counts them: a key's
 * first request opens its window, which lasts `windowMs`. Synchronous — that store answers through
 * three promises, which cost a tenth of a request's CPU (docs/performance.md) — so it is used when
 * counters are not shared; with Redis, @fastify/rate-limit counts.
 */
export class MemoryWindowCounter {
  readonly #windows = new LRUCache<string, { count: number, startMs: number }>({ max: MAX_COUNTED_KEYS })
  readonly #windowMs: number
  readonly #clock: Clock

  constructor (windowMs: number, clock: Clock) {
    this.#windowMs = windowMs
    this.#clock = clock
  }

  /** Counts one more request of `key`. */
  increment (key: string): WindowCount {
    const now = this.#clock.now()
    let window = this.#windows.get(key)
    if (window === undefined || window.startMs + this.#windowMs <= now) {
      window = { count: 0, startMs: now }
      this.#windows.set(key, window)
    }
    window.count++
    return { current: window.count, ttlMs: window.startMs + this.#windowMs - now }
  }
}
