import { StoreUnavailableError } from '../errors/catalogue.js'

/** The outcome of one item of a batch: its result, or the error that item alone failed with. */
export type ItemOutcome<R> = { ok: true, value: R } | { ok: false, error: unknown }

/**
 * Writes one batch in one transaction (one commit, one fsync) and returns one outcome per item,
 * in order. It throws when the whole transaction failed: then no item was written.
 */
export type BatchWriter<T, R> = (items: readonly T[]) => Promise<Array<ItemOutcome<R>>> | Array<ItemOutcome<R>>

interface Pending<T, R> {
  item: T
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: writes that arrive together share one transaction, so a burst of creates costs
 * one fsync instead of one each. A write is queued, and the queue is written as one batch once
 * the current turn of the event loop is over — or, while a batch is being written, as soon as
 * that batch has committed. Each caller's promise settles only after its batch has committed,
 * so nothing is acknowledged before it is durable.
 */
export class GroupCommit<T, R> {
  readonly #write: BatchWriter<T, R>
  readonly #maxBatch: number
  #queue: Array<Pending<T, R>> = []
  #scheduled = false
  #writing = false

  readonly #failsQueued: (error: unknown) => boolean

  /**
   * @param failsQueued when a batch fails with an error for which this is true (the store is
   *   unavailable), the writes queued behind it fail with it at once rather than wait out another
   *   timeout: a caller then waits at most for the batch ahead of it, not for a chain of them.
   */
  constructor (write: BatchWriter<T, R>, maxBatch: number, failsQueued: (error: unknown) => boolean = () => false) {
    this.#write = write
    this.#maxBatch = maxBatch
    this.#failsQueued = failsQueued
  }

  async submit (item: T): Promise<R> {
    return await new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      this.#schedule()
    })
  }

  #schedule (): void {
    if (this.#scheduled || this.#writing) return
    this.#scheduled = true
    // after the current turn: every write that arrived in it joins the batch
    setImmediate(() => {
      this.#scheduled = false
      this.#flush().catch(() => {})
    })
  }

  async #flush (): Promise<void> {
    if (this.#queue.length === 0) return
    const batch = this.#queue.slice(0, this.#maxBatch)
    this.#queue = this.#queue.slice(batch.length)
    this.#writing = true
    try {
      const outcomes = await this.#write(batch.map((pending) => pending.item))
      batch.forEach((pending, index) => {
        const outcome = outcomes[index]
        if (outcome === undefined) pending.reject(new Error('group commit: the writer returned too few outcomes'))
        else if (outcome.ok) pending.resolve(outcome.value)
        else pending.reject(outcome.error)
      })
    } catch (error) {
      const failed = this.#failsQueued(error) ? [...batch, ...this.#queue.splice(0)] : batch
      for (const pending of failed) pending.reject(error)
    } finally {
      this.#writing = false
      if (this.#queue.length > 0) this.#schedule()
    }
  }
}

/**
 * A group commit of a store's writes, at most `maxBatch` a transaction, whose queued writes fail at once
 * with a batch that found the store unavailable: a caller then waits at most for the batch ahead of it,
 * and its 503 comes within the store's bound instead of after a chain of timeouts.
 */
export function storeGroupCommit<T, R> (write: BatchWriter<T, R>, maxBatch: number): GroupCommit<T, R> {
  return new GroupCommit(write, maxBatch, (error) => error instanceof StoreUnavailableError)
}
