import { once } from 'node:events'
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib'
import type { AmqpBusSettings } from '../../infra/config/bus-config.js'
import { withinDeadline, BrokerConnection, BROKER_TIMEOUT_MS, CLOUDEVENTS_CONTENT_TYPE, describeBrokerUrl, type Bus, type BusMessage } from './bus.js'

interface Connected {
  connection: ChannelModel
  channel: ConfirmChannel
}

/**
 * RabbitMQ over AMQP 0-9-1 (amqplib): each event to the durable topic exchange, routing key its type, as a
 * persistent message whose `message_id` is the event id, on a confirm channel: a batch counts as published
 * once the broker has confirmed every message. One channel, so the broker routes them in the order sent.
 * amqplib does not reconnect by itself, which is what the relay wants: after a failure the connection is
 * dropped whole and the next batch starts on a new one, from the position the store holds.
 */
export class RabbitMqBus implements Bus {
  readonly name = 'rabbitmq'
  readonly description: string
  readonly #settings: AmqpBusSettings
  readonly #broker = new BrokerConnection<Connected>(async (lost) => await this.#connect(lost))

  constructor (settings: AmqpBusSettings) {
    this.#settings = settings
    this.description = `RabbitMQ ${describeBrokerUrl(settings.url)}, exchange ${settings.exchange}`
  }

  async publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<void> {
    const connecting = this.#broker.current()
    try {
      const { channel } = await withinDeadline(connecting, signal, BROKER_TIMEOUT_MS, 'connecting to RabbitMQ')
      const confirmed: Array<Promise<void>> = []
      const timestamp = Math.floor(Date.now() / 1000)
      for (const message of messages) {
        if (signal.aborted) throw new Error('publishing to RabbitMQ: stopped')
        let written = true
        const confirm = new Promise<void>((resolve, reject) => {
          written = channel.publish(this.#settings.exchange, message.type, message.body, {
            persistent: true, messageId: message.id, type: message.type, contentType: CLOUDEVENTS_CONTENT_TYPE, appId: 'petstore', timestamp
          }, (error: unknown) => { if (error == null) resolve(); else reject(error instanceof Error ? error : new Error(`RabbitMQ refused message ${message.id}`)) })
        })
        // handled here too: a batch given up before all are confirmed leaves the rest to fail unheard
        confirm.catch(() => {})
        confirmed.push(confirm)
        // the socket's buffer is full: wait until it has room rather than queue the whole batch in memory
        if (!written) await withinDeadline(once(channel, 'drain'), signal, BROKER_TIMEOUT_MS, 'writing to RabbitMQ')
      }
      await withinDeadline(Promise.all(confirmed), signal, BROKER_TIMEOUT_MS, 'publishing to RabbitMQ')
    } catch (error) {
      this.#broker.drop(connecting)
      throw error
    }
  }

  async close (): Promise<void> {
    await this.#broker.close()
  }

  async #connect (lost: () => void): Promise<Connected> {
    const connection = await amqp.connect(this.#settings.url, { timeout: BROKER_TIMEOUT_MS, clientProperties: { connection_name: 'petstore' } })
    // a connection's or channel's error is followed by its close: the close is what drops it
    connection.on('error', () => {})
    connection.on('close', lost)
    try {
      const channel = await connection.createConfirmChannel()
      channel.on('error', () => {})
      channel.on('close', lost)
      await channel.assertExchange(this.#settings.exchange, 'topic', { durable: true })
      return { connection, channel }
    } catch (error) {
      await connection.close().catch(() => {})
      throw error
    }
  }
}
