import pg from 'pg'

export interface ChangeListenerOptions {
  url: string
  /** Notification channel; the payload of each notification is the schema that changed. */
  channel: string
  timeoutMs: number
  onBackgroundError?: (error: Error) => void
}

// how long to wait before listening again after the connection was lost
const RECONNECT_DELAY_MS = 1000

/**
 * A version that moves whenever another instance (or this one) notifies the channel for this schema,
 * heard over one dedicated connection with `LISTEN`. While that connection is down, the version
 * is unknown (undefined), so nothing read under an older one is reused; reconnecting moves it,
 * since anything may have changed meanwhile. It connects on first use.
 */
export class ChangeListener {
  readonly #options: ChangeListenerOptions
  #client: pg.Client | undefined
  #listening = false
  #started = false
  #closed = false
  #version = 0
  #retry: NodeJS.Timeout | undefined
  readonly #subscribers = new Set<() => void>()

  constructor (options: ChangeListenerOptions) {
    this.#options = options
  }

  /** The current version, or undefined while not listening. */
  version (): number | undefined {
    if (!this.#started) {
      this.#started = true
      this.#connect().catch(() => {})
    }
    return this.#listening ? this.#version : undefined
  }

  /**
   * Calls `listener` on each notification, and on each (re)connection (anything may have changed while
   * not listening); connects if not yet. Returns what stops it. Listeners run synchronously and must not throw.
   */
  subscribe (listener: () => void): () => void {
    this.#subscribers.add(listener)
    this.version()
    return () => { this.#subscribers.delete(listener) }
  }

  /** Moves the version at once: this process changed something itself. */
  bump (): void {
    this.#version++
  }

  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    const client = this.#client
    this.#client = undefined
    this.#listening = false
    await client?.end().catch(() => {})
  }

  async #connect (): Promise<void> {
    if (this.#closed) return
    const client = new pg.Client({
      connectionString: this.#options.url,
      connectionTimeoutMillis: this.#options.timeoutMs,
      keepAlive: true,
      application_name: 'petstore-listener'
    })
    this.#client = client
    let schema: string | undefined
    client.on('notification', (message) => { if (message.payload === schema) this.#changed() })
    client.on('error', (error) => { this.#lost(client, error) })
    client.on('end', () => { this.#lost(client) })
    try {
      await client.connect()
      schema = (await client.query<{ schema: string }>('SELECT current_schema() AS schema')).rows[0]?.schema
      await client.query(`LISTEN ${this.#options.channel}`)
      if (this.#client !== client) return
      this.#listening = true
      this.#changed()
    } catch (error) {
      this.#lost(client, error instanceof Error ? error : new Error(String(error)))
    }
  }

  #changed (): void {
    this.#version++
    for (const subscriber of this.#subscribers) subscriber()
  }

  #lost (client: pg.Client, error?: Error): void {
    if (this.#client !== client) return
    this.#client = undefined
    this.#listening = false
    client.end().catch(() => {})
    if (this.#closed) return
    if (error !== undefined) this.#options.onBackgroundError?.(error)
    this.#retry = setTimeout(() => { this.#connect().catch(() => {}) }, RECONNECT_DELAY_MS)
    this.#retry.unref()
  }
}
