/**
 * Reads by key that arrive together share one query: each caller's key is queued, and once the
 * current turn of the event loop is over the queue is read with one statement (`read` gets the
 * distinct keys and returns what it found, by key). The read begins after every request it serves
 * arrived, so none is answered from a read begun before it. Unlike a group commit, batches do not
 * wait for each other (PostgreSQL's run side by side on the pool; SQLite's is one synchronous
 * statement, which also spares each request a statement of its own between its parse and its
 * answer: docs/performance.md). A failed read fails every caller of its batch.
 * The batch's query runs in the first caller's context, so a traced driver's span nests under that
 * caller only (docs/operations.md, Tracing).
 */
export class GroupRead<K, V> {
  readonly #read: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>
  readonly #maxBatch: number
  #queue = new Map<K, Array<{ resolve: (value: V | undefined) => void, reject: (error: unknown) => void }>>()
  #scheduled = false

  constructor (read: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>, maxBatch: number) {
    this.#read = read
    this.#maxBatch = maxBatch
  }

  /** What `read` finds for `key`, or undefined when it finds nothing. */
  async get (key: K): Promise<V | undefined> {
    return await new Promise<V | undefined>((resolve, reject) => {
      const waiting = this.#queue.get(key)
      if (waiting === undefined) this.#queue.set(key, [{ resolve, reject }])
      else waiting.push({ resolve, reject })
      if (this.#scheduled) return
      this.#scheduled = true
      // after the current turn: every read that arrived in it joins the batch
      setImmediate(() => { this.#flush() })
    })
  }

  #flush (): void {
    this.#scheduled = false
    const queued = [...this.#queue]
    this.#queue = new Map()
    for (let start = 0; start < queued.length; start += this.#maxBatch) {
      const batch = queued.slice(start, start + this.#maxBatch)
      this.#read(batch.map(([key]) => key)).then((found) => {
        for (const [key, waiting] of batch) for (const { resolve } of waiting) resolve(found.get(key))
      }, (error: unknown) => {
        for (const [, waiting] of batch) for (const { reject } of waiting) reject(error)
      })
    }
  }
}

/**
 * A read without a key (the inventory's counts) that the callers of one event-loop turn share, as {@link GroupRead}'s
 * callers of one key do: it begins after the turn, so after each of them asked.
 */
export function sharedPerTurn<V> (read: () => Promise<V>): () => Promise<V> {
  const group = new GroupRead<null, V>(async () => new Map([[null, await read()]]), 1)
  // the read always answers its one key, so `undefined` here is a value `read` gave, not a miss
  return async () => await group.get(null) as V
}
