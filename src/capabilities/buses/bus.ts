import type { BusName } from './store/bus-position-store.js'

/** The media type of a CloudEvent in structured JSON mode: what every message's content type says. */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json'

/** How long a broker gets to accept a connection, and to acknowledge a batch, before the attempt fails. */
export const BROKER_TIMEOUT_MS = 5_000

/** One event as a message: its id (the broker's message id, for deduplication), its type (the subject or routing key) and its body. */
export interface BusMessage {
  readonly id: string
  readonly type: string
  /** The CloudEvent, structured JSON mode (cloud-event.ts). */
  readonly body: Buffer
}

/**
 * A message broker the events are published to: one file per broker (nats-bus.ts, rabbitmq-bus.ts), so
 * another broker (Kafka) is one more file and one more line in buses-plugin.ts. It connects on first use and,
 * after any failure, drops its connection whole (nothing it buffered is sent later, out of order): the next
 * call connects again.
 */
export interface Bus {
  readonly name: BusName
  /** Where it publishes, for logs and the CLI (never a password). */
  readonly description: string
  /**
   * Publishes `messages` in order, pipelined, and resolves once the broker has acknowledged every one (stored
   * it); rejects at the first refusal or failure, after {@link BROKER_TIMEOUT_MS} without an answer, or when
   * `signal` aborts. A rejection says nothing of which were stored: the caller publishes them all again.
   */
  publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<void>
  /** Closes the connection, if one is open. */
  close (): Promise<void>
}

/** The address of a broker's URL without its credentials: what logs and messages may show. */
export function describeBrokerUrl (url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`
}

/** `work`, unless `signal` aborts or `ms` pass first: then rejects, saying `what` did not finish (the work is left to its own end). */
export async function withinDeadline<T> (work: Promise<T>, signal: AbortSignal, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`${what}: no answer within ${ms} ms`)) }, ms)
    onAbort = () => { reject(new Error(`${what}: stopped`)) }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
  }
}

/**
 * A broker's connection, made on first use and dropped whole after a failure (or when the broker closes it): the
 * next use connects again, and starts from the position the store holds. What `connect` makes holds the
 * connection to close; `connect` gets what to call when the connection is lost.
 */
export class BrokerConnection<Connected extends { connection: { close: () => Promise<void> } }> {
  readonly #connect: (lost: () => void) => Promise<Connected>
  #connecting: Promise<Connected> | undefined

  constructor (connect: (lost: () => void) => Promise<Connected>) {
    this.#connect = connect
  }

  /** The connection being made or made, a new one when there is none. */
  current (): Promise<Connected> {
    if (this.#connecting === undefined) {
      const connecting: Promise<Connected> = this.#connect(() => { this.drop(connecting) })
      this.#connecting = connecting
    }
    return this.#connecting
  }

  /** Forgets `connecting` (when still the current one) and closes it: the next use connects again. */
  drop (connecting: Promise<Connected>): void {
    if (this.#connecting !== connecting) return
    this.#connecting = undefined
    connecting.then(async ({ connection }) => { await connection.close() }, () => {}).catch(() => {})
  }

  /** Closes the connection, if any, and forgets it. */
  async close (): Promise<void> {
    const connecting = this.#connecting
    this.#connecting = undefined
    const connected = await connecting?.catch(() => undefined)
    await connected?.connection.close().catch(() => {})
  }
}
