import type { BusName } from './store/bus-position-store.js'

/** The media type of a CloudEvent in structured JSON mode: what every message's content type says. */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json'

/** How long a broker gets to accept a connection, and to acknowledge a batch, before the attempt fails. */
export const BROKER_TIMEOUT_MS = 5_000

/**
 * One event as a message: its message id (`<deployment id>:<event id>`, the broker's key for deduplication, unique
 * across deployments sharing a broker), its event id, its type (the subject or routing key) and its body.
 */
export interface BusMessage {
  readonly id: string
  readonly eventId: number
  readonly type: string
  /** The CloudEvent, structured JSON mode (cloud-event.ts). */
  readonly body: Buffer
}

/** What the broker said of a batch it acknowledged. */
export interface PublishOutcome {
  /** The messages it answered it already held by their message id (JetStream's duplicate window), in order. */
  readonly duplicates: readonly BusMessage[]
}

/**
 * A message broker the events are published to, one file per broker (nats-bus.ts, rabbitmq-bus.ts). It connects on
 * first use and, after any failure, drops its connection whole (nothing it buffered is sent later, out of order): the
 * next call connects again. Another broker (Kafka, say) is, in this folder, its file, its name in `BusName` and a line
 * each in buses-plugin.ts (its relay), bus-channels.ts (its AsyncAPI channel) and cli.ts (its description); outside
 * it, its variables in `infra/config/bus-config.ts` (the one config module parses every variable at start), its
 * client in package.json, and its lines in docs/configuration.md and docs/buses.md.
 */
export interface Bus {
  readonly name: BusName
  /** Where it publishes, for logs and the CLI (never a password). */
  readonly description: string
  /**
   * Publishes `messages` in order, pipelined, and resolves once the broker has acknowledged every one (stored
   * it, or said it already held its message id); rejects at the first refusal or failure, after
   * {@link BROKER_TIMEOUT_MS} without an answer, or when `signal` aborts (the batch's lease is ending). A
   * rejection says nothing of which were stored: the caller publishes them all again.
   */
  publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<PublishOutcome>
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
    onAbort = () => { reject(new Error(`${what}: ${signal.reason instanceof Error ? signal.reason.message : 'stopped'}`)) }
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

  /**
   * Runs `work` on the connection, made within {@link BROKER_TIMEOUT_MS} (`broker` names it in the error), and drops
   * the connection whole when anything fails: nothing it buffered is sent after the retry, out of order.
   */
  async use<T> (signal: AbortSignal, broker: string, work: (connected: Connected) => Promise<T>): Promise<T> {
    const connecting = this.current()
    try {
      return await work(await withinDeadline(connecting, signal, BROKER_TIMEOUT_MS, `connecting to ${broker}`))
    } catch (error) {
      this.drop(connecting)
      throw error
    }
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
