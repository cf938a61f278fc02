import { ApiError } from '../../../infra/errors/catalogue.js'
import type { EventStreamSettings } from '../../../infra/config/config.js'

/** Sent as `Retry-After` with the 429 of a key at its cap: a slot frees only when one of its streams ends. */
export const STREAM_CAP_RETRY_AFTER_SECONDS = 5

/** What a refused stream was over: the key's cap or the instance's. */
export type StreamCap = 'per_key' | 'per_instance'

/** One stream's place among the open ones, held until it is given back (once). */
export interface StreamSlot {
  release: () => void
}

/**
 * The open streams of this instance, counted per API key (its `scope`) and in all: a stream takes a slot at
 * its start, before any store read, and gives it back when it ends, whatever ends it.
 */
export class StreamSlots {
  readonly #settings: EventStreamSettings
  readonly #byKey = new Map<string, number>()
  readonly #onChange: (open: number) => void
  readonly #onRefused: (cap: StreamCap) => void
  #open = 0

  constructor (settings: EventStreamSettings, onChange: (open: number) => void, onRefused: (cap: StreamCap) => void) {
    this.#settings = settings
    this.#onChange = onChange
    this.#onRefused = onRefused
  }

  get open (): number {
    return this.#open
  }

  /** A slot for a stream of the key `scope`; throws the 429 (the key's cap) or the 503 (the instance's) when none is left. */
  take (scope: string): StreamSlot {
    const { maxPerKey, maxPerInstance } = this.#settings
    const ofKey = this.#byKey.get(scope) ?? 0
    if (ofKey >= maxPerKey) {
      this.#onRefused('per_key')
      throw new ApiError('rate_limited', `This API key has ${ofKey} event streams open on this instance, the most it may (EVENT_STREAM_MAX_PER_KEY); ` +
        'close one, or retry after Retry-After seconds.', { 'retry-after': String(STREAM_CAP_RETRY_AFTER_SECONDS) })
    }
    if (this.#open >= maxPerInstance) {
      this.#onRefused('per_instance')
      throw new ApiError('service_unavailable', `This instance has ${this.#open} event streams open, the most it may (EVENT_STREAM_MAX_PER_INSTANCE); ` +
        'retry after Retry-After seconds, on this instance or another.')
    }
    this.#byKey.set(scope, ofKey + 1)
    this.#open++
    this.#onChange(this.#open)
    let held = true
    return {
      release: () => {
        if (!held) return
        held = false
        const left = (this.#byKey.get(scope) ?? 1) - 1
        if (left === 0) this.#byKey.delete(scope)
        else this.#byKey.set(scope, left)
        this.#open--
        this.#onChange(this.#open)
      }
    }
  }
}
