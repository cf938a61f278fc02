import { connect, headers, type NatsConnection } from '@nats-io/transport-node'
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, StorageType, type JetStreamClient } from '@nats-io/jetstream'
import type { NatsBusSettings } from '../../infra/config/bus-config.js'
import { withinDeadline, BrokerConnection, BROKER_TIMEOUT_MS, CLOUDEVENTS_CONTENT_TYPE, describeBrokerUrl, type Bus, type BusMessage } from './bus.js'

interface Connected {
  connection: NatsConnection
  client: JetStreamClient
}

/**
 * NATS JetStream: each event to `<prefix>.<type>` in the stream (created when missing, file storage), with
 * `Nats-Msg-Id` the event id, so the stream drops an event published again within its duplicate window, and
 * every publish acknowledgement awaited. The client's own reconnection is off: after a failure its buffer
 * would be sent on the new connection before the messages lost with the old one, out of order.
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
      const { client } = await withinDeadline(connecting, signal, BROKER_TIMEOUT_MS, 'connecting to NATS')
      const acknowledged = Promise.all(messages.map(async (message) => {
        const header = headers()
        header.set('content-type', CLOUDEVENTS_CONTENT_TYPE)
        return await client.publish(`${this.#settings.subjectPrefix}.${message.type}`, message.body, { msgID: message.id, headers: header, timeout: BROKER_TIMEOUT_MS })
      }))
      await withinDeadline(acknowledged, signal, BROKER_TIMEOUT_MS + 1_000, 'publishing to NATS')
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
    return { connection, client: jetstream(connection, { timeout: BROKER_TIMEOUT_MS }) }
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
