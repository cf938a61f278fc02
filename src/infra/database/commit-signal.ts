/**
 * The PostgreSQL channel every transaction that records events notifies (payload: its schema), at
 * commit, to every instance listening; on SQLite, other processes' commits are seen by `PRAGMA data_version`.
 */
export const EVENTS_RECORDED_CHANNEL = 'petstore_events_recorded'

/**
 * An in-process signal raised after a commit (events recorded, say): whoever waits for such commits
 * on this instance hears of them at once, without polling. Listeners run synchronously and must not throw.
 */
export class CommitSignal {
  readonly #listeners = new Set<() => void>()
  #raising = false

  /** Calls `listener` after each commit from now on; returns what stops it. */
  subscribe (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  /** Says a commit happened (called after it, or when its outcome is unknown). A property: it is handed on as it is. */
  readonly raise = (): void => {
    for (const listener of this.#listeners) listener()
  }

  /**
   * Raises once the synchronous work under way has ended (a microtask): after the commit of a SQLite
   * transaction it runs in, which is synchronous. Calls before then are merged into one.
   */
  raiseAfterThisTask (): void {
    if (this.#raising) return
    this.#raising = true
    queueMicrotask(() => {
      this.#raising = false
      this.raise()
    })
  }
}
