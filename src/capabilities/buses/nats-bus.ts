import { connect, createInbox, headers, nanos, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, StorageType } from '@nats-io/jetstream'
import type { NatsBusSettings } from '../../infra/config/bus-config.js'
import { withinDeadline, BrokerConnection, BROKER_TIMEOUT_MS, CLOUDEVENTS_CONTENT_TYPE, describeBrokerUrl, type Bus, type BusMessage, type PublishOutcome } from './bus.js'
import { subjectMatches } from './nats-subjects.js'

interface Connected {
  connection: NatsConnection
  acks: PublishAcks
  /** The subjects the stream holds, as its configuration says. */
  streamSubjects: readonly string[]
}

/** One message's publish acknowledgement, awaited: true when the stream said it held the message id already. */
interface Awaited {
  resolve: (duplicate: boolean) => void
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
  expect (messageId: string): { reply: string, acknowledged: Promise<boolean> } {
    const token = String(this.#next++)
    const acknowledged = new Promise<boolean>((resolve, reject) => {
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
      const ack = JSON.parse(message.string()) as { stream?: unknown, duplicate?: unknown, error?: { description?: unknown } }
      if (ack.error !== undefined) awaited.reject(new Error(String(ack.error.description)))
      else if (typeof ack.stream !== 'string' || ack.stream === '') awaited.reject(new Error('an acknowledgement without a stream'))
      else awaited.resolve(ack.duplicate === true)
    } catch {
      awaited.reject(new Error('an acknowledgement that is not JSON'))
    }
  }
}

/**
 * NATS JetStream: each event to `<prefix>.<type>` in the stream (created when missing: file storage, the
 * configured maximum age), with `Nats-Msg-Id` the message id (`<deployment>:<event id>`), so the stream drops an
 * event published again within its duplicate window and never another deployment's, and every publish
 * acknowledgement awaited (a batch's messages all sent, then their acknowledgements awaited together).
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

  async publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<PublishOutcome> {
    return await this.#broker.use(signal, 'NATS', async ({ connection, acks, streamSubjects }) => {
      const subjects = messages.map((message) => `${this.#settings.subjectPrefix}.${message.type}`)
      this.#checkSubjects(subjects, streamSubjects)
      // all published at once, in order on the one connection; each stored or refused on its own reply subject
      const acknowledged = Promise.all(messages.map((message, index) => {
        const header = headers()
        header.set('content-type', CLOUDEVENTS_CONTENT_TYPE)
        header.set('Nats-Msg-Id', message.id)
        const { reply, acknowledged } = acks.expect(message.id)
        connection.publish(subjects[index] as string, message.body, { headers: header, reply })
        return acknowledged
      }))
      try {
        const duplicate = await withinDeadline(acknowledged, signal, BROKER_TIMEOUT_MS, 'publishing to NATS')
        return { duplicates: messages.filter((_message, index) => duplicate[index] === true) }
      } catch (error) {
        acks.forget()
        throw error
      }
    })
  }

  async close (): Promise<void> {
    await this.#broker.close()
  }

  async #connect (lost: () => void): Promise<Connected> {
    const connection = await connect({ servers: this.#settings.url, name: 'petstore', reconnect: false, timeout: BROKER_TIMEOUT_MS })
    connection.closed().then(lost, () => {})
    try {
      return { connection, acks: new PublishAcks(connection), streamSubjects: await this.#ensureStream(connection) }
    } catch (error) {
      await connection.close().catch(() => {})
      throw error
    }
  }

  /** The stream's subjects, the stream created first when it is missing. */
  async #ensureStream (connection: NatsConnection): Promise<readonly string[]> {
    const manager = await jetstreamManager(connection, { timeout: BROKER_TIMEOUT_MS })
    const { stream, subjectPrefix, streamMaxAgeMs } = this.#settings
    try {
      return (await manager.streams.info(stream)).config.subjects ?? []
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error
      // another instance may create it meanwhile: the same configuration, so an existing one is as good
      const created = await manager.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], storage: StorageType.File, max_age: nanos(streamMaxAgeMs) })
        .catch(async (added: unknown) => await manager.streams.info(stream).catch(() => { throw added }))
      return created.config.subjects ?? []
    }
  }

  /** Refuses, saying why, to publish a subject the stream does not hold (JetStream would answer only "no responders"). */
  #checkSubjects (subjects: readonly string[], streamSubjects: readonly string[]): void {
    for (const subject of new Set(subjects)) {
      if (streamSubjects.some((filter) => subjectMatches(filter, subject))) continue
      throw new Error(`the stream ${this.#settings.stream} holds the subjects ${streamSubjects.length === 0 ? '(none)' : streamSubjects.join(', ')}, ` +
        `not ${subject}: add ${this.#settings.subjectPrefix}.> to the stream's subjects, or set NATS_SUBJECT_PREFIX (or NATS_STREAM) to match it`)
    }
  }
}
