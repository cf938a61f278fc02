import pg from 'pg'
import { ChangeListener } from './change-listener.js'

export interface NotificationListenerOptions {
  url: string
  timeoutMs: number
  onBackgroundError?: (error: Error) => void
}

// how long to wait before listening again after the connection was lost
const RECONNECT_DELAY_MS = 1000

/**
 * The one connection an instance listens on (`LISTEN`), whatever the number of channels: each capability asks for
 * its channel ({@link channel}) and hears only the notifications whose payload is this connection's schema. It
 * connects on first use, listens on each channel asked for (a channel asked for later is listened on at once),
 * and after losing the connection connects again and listens on them all.
 */
export class NotificationListener {
  readonly #options: NotificationListenerOptions
  readonly #channels = new Map<string, ChangeListener>()
  #client: pg.Client | undefined
  // set once the connection is up and its schema known
  #connected = false
  #started = false
  #closed = false
  #retry: NodeJS.Timeout | undefined

  constructor (options: NotificationListenerOptions) {
    this.#options = options
  }

  /** The channel `name` (a PostgreSQL identifier of ours, never a user's); the same one for every caller. */
  channel (name: string): ChangeListener {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new RangeError(`a notification channel is a lower-case identifier, got "${name}"`)
    let channel = this.#channels.get(name)
    if (channel === undefined) {
      channel = new ChangeListener(name, () => { this.start() })
      this.#channels.set(name, channel)
      const client = this.#client
      if (client !== undefined && this.#connected) this.#listen(client, channel).catch(() => {})
    }
    return channel
  }

  /** Connects, unless it already has (or is closed). */
  start (): void {
    if (this.#started) return
    this.#started = true
    this.#connect().catch(() => {})
  }

  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    const client = this.#client
    this.#client = undefined
    this.#connected = false
    for (const channel of this.#channels.values()) channel.setListening(false)
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
    client.on('notification', (message) => {
      if (message.payload === schema) this.#channels.get(message.channel)?.changed()
    })
    client.on('error', (error) => { this.#lost(client, error) })
    client.on('end', () => { this.#lost(client) })
    try {
      await client.connect()
      schema = (await client.query<{ schema: string }>('SELECT current_schema() AS schema')).rows[0]?.schema
      if (this.#client !== client) return
      this.#connected = true
      for (const channel of [...this.#channels.values()]) await this.#listen(client, channel)
    } catch (error) {
      this.#lost(client, error instanceof Error ? error : new Error(String(error)))
    }
  }

  async #listen (client: pg.Client, channel: ChangeListener): Promise<void> {
    await client.query(`LISTEN ${channel.channel}`)
    if (this.#client === client) channel.setListening(true)
  }

  #lost (client: pg.Client, error?: Error): void {
    if (this.#client !== client) return
    this.#client = undefined
    this.#connected = false
    for (const channel of this.#channels.values()) channel.setListening(false)
    client.end().catch(() => {})
    if (this.#closed) return
    if (error !== undefined) this.#options.onBackgroundError?.(error)
    this.#retry = setTimeout(() => { this.#connect().catch(() => {}) }, RECONNECT_DELAY_MS)
    this.#retry.unref()
  }
}
