/**
 * One channel heard over the instance's one listening connection (notification-listener.ts): a version that moves
 * whenever another instance (or this one) notifies the channel for this schema. While the connection is down, or
 * before its `LISTEN` is done, the version is unknown (undefined), so nothing read under an older one is reused; listening again moves it, since
 * anything may have changed meanwhile.
 */
export class ChangeListener {
  readonly channel: string
  // connects the listening connection, unless it already has
  readonly #start: () => void
  readonly #subscribers = new Set<() => void>()
  #version = 0
  #listening = false

  constructor (channel: string, start: () => void) {
    this.channel = channel
    this.#start = start
  }

  /** The current version, or undefined while not listening; connects if not yet. */
  version (): number | undefined {
    this.#start()
    return this.#listening ? this.#version : undefined
  }

  /**
   * Calls `listener` on each notification, and each time listening (re)starts (anything may have changed while
   * not listening); connects if not yet. Returns what stops it. Listeners run synchronously and must not throw.
   */
  subscribe (listener: () => void): () => void {
    this.#subscribers.add(listener)
    this.#start()
    return () => { this.#subscribers.delete(listener) }
  }

  /** Moves the version at once: this process changed something itself. */
  bump (): void {
    this.#version++
  }

  /** The connection is listening on this channel (true: moves the version and tells the subscribers), or no longer (false). */
  setListening (listening: boolean): void {
    this.#listening = listening
    if (listening) this.changed()
  }

  /** A notification for this schema came. */
  changed (): void {
    this.#version++
    for (const subscriber of this.#subscribers) subscriber()
  }
}
