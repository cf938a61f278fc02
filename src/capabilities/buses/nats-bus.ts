import { connect, createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, StorageType } from '@nats-io/jetstream'
import type { NatsBusSettings } from '../../infra/config/bus-config.js'
import { withinDeadline, BrokerConnection, BROKER_TIMEOUT_MS, CLOUDEVENTS_CONTENT_TYPE, describeBrokerUrl, type Bus, type BusMessage } from './bus.js'

interface Connected {
  connection: NatsConnection
  acks: PublishAcks
}

/** One message's publish acknowledgement, awaited. */
interface Awaited {
  resolve: () => void
  reject: (error: Error) => void
}

/**
 * The publish acknowledgements of one connection, on one subscription: each message is published with the reply
 * subject `<inbox>.<n>`, and the stream's acknowledgement (a PubAck, JSON) or a status (503: no stream holds the
 * subject) comes back there. What `js.publish` does per message (a request, a timer and a subscription entry
 * each) costs ~5× the CPU per message; a batch's one deadline is `publish`'s.
 */
class PublishAcks {
  readonly #inbox = createInbox()
  readonly #awaited = new Map<string, Awaited>()
  #next = 0

  constructor (connection: NatsConnection) {
    connection.subscribe(`${this.#inbox}.*`, { callback: (_error, message) => { this.#answered(message) } })
  }

  /** A reply subject of its own for one message, and the promise of its acknowledgement. */
  expect (messageId: string): { reply: string, acknowledged: Promise<void> } {
    const token = String(this.#next++)
    const acknowledged = new Promise<void>((resolve, reject) => {
      this.#awaited.set(token, { resolve, reject: (error) => { reject(new Error(`JetStream did not store event ${messageId}: ${error.message}`)) } })
    })
    // handled here too: a batch given up before all are acknowledged leaves the rest to fail unheard
    acknowledged.catch(() => {})
    return { reply: `${this.#inbox}.${token}`, acknowledged }
  }

  /** Forgets every acknowledgement still awaited (the batch failed: its connection is dropped). */
  forget (): void {
    this.#awaited.clear()
  }

  #answered (message: Msg): void {
    const token = message.subject.slice(this.#inbox.length + 1)
    const awaited = this.#awaited.get(token)
    if (awaited === undefined) return
    this.#awaited.delete(token)
    if (message.headers?.hasError === true) {
      awaited.reject(new Error(`${message.headers.code} ${message.headers.description}`))
      return
    }
    try {
      const ack = JSON.parse(message.string()) as { stream?: unknown, error?: { description?: unknown } }
      if (ack.error !== undefined) awaited.reject(new Error(String(ack.error.description)))
      else if (typeof ack.stream !== 'string' || ack.stream === '') awaited.reject(new Error('an acknowledgement without a stream'))
      else awaited.resolve()
    } catch {
      awaited.reject(new Error('an acknowledgement that is not JSON'))
    }
  }
}

/**
 * NATS JetStream: each event to `<prefix>.<type>` in the stream (created when missing, file storage), with
 * `Nats-Msg-Id` the event id, so the stream drops an event published again within its duplicate window, and
 * every publish acknowledgement awaited (a batch's messages all sent, then their acknowledgements awaited together).
 * The client's own reconnection is off: after a failure its buffer would be sent on the new connection before the
 * messages lost with the old one, out of order.
 */
export class NatsBus implements Bus {
  readonly name = 'nats'
  readonly description: string
  readonly #settings: NatsBusSettings
  readonly #broker = new BrokerConnection<Connected>(async (lost) => await this.#connect(lost))

  constructor (settings: NatsBusSettings) {
    this.#settings = settings
    this.description = `NATS JetStream ${describeBrokerUrl(settings.url)}, stream ${settings.stream}, subjects ${settings.subjectPrefix}.>`
  }

  async publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<void> {
    const connecting = this.#broker.current()
    try {
      const { connection, acks } = await withinDeadline(connecting, signal, BROKER_TIMEOUT_MS, 'connecting to NATS')
      // all published at once, in order on the one connection; each stored or refused on its own reply subject
      const acknowledged = Promise.all(messages.map((message) => {
        const header = headers()
        header.set('content-type', CLOUDEVENTS_CONTENT_TYPE)
        header.set('Nats-Msg-Id', message.id)
        const { reply, acknowledged } = acks.expect(message.id)
        connection.publish(`${this.#settings.subjectPrefix}.${message.type}`, message.body, { headers: header, reply })
        return acknowledged
      }))
      try {
        await withinDeadline(acknowledged, signal, BROKER_TIMEOUT_MS, 'publishing to NATS')
      } catch (error) {
        acks.forget()
        throw error
      }
    } catch (error) {
      this.#broker.drop(connecting)
      throw error
    }
  }

  async close (): Promise<void> {
    await this.#broker.close()
  }

  async #connect (lost: () => void): Promise<Connected> {
    const connection = await connect({ servers: this.#settings.url, name: 'petstore', reconnect: false, timeout: BROKER_TIMEOUT_MS })
    connection.closed().then(lost, () => {})
    try {
      await this.#ensureStream(connection)
    } catch (error) {
      await connection.close().catch(() => {})
      throw error
    }
    return { connection, acks: new PublishAcks(connection) }
  }

  async #ensureStream (connection: NatsConnection): Promise<void> {
    const manager = await jetstreamManager(connection, { timeout: BROKER_TIMEOUT_MS })
    const { stream, subjectPrefix } = this.#settings
    try {
      await manager.streams.info(stream)
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error
      // another instance may create it meanwhile: the same configuration, so an existing one is as good
      await manager.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], storage: StorageType.File }).catch(async (added: unknown) => {
        await manager.streams.info(stream).catch(() => { throw added })
      })
    }
  }
}
