import { once } from 'node:events'
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib'
import type { AmqpBusSettings } from '../../infra/config/bus-config.js'
import { withinDeadline, BrokerConnection, BROKER_TIMEOUT_MS, CLOUDEVENTS_CONTENT_TYPE, describeBrokerUrl, type Bus, type BusMessage, type PublishOutcome } from './bus.js'

interface Connected {
  connection: ChannelModel
  channel: ConfirmChannel
}

/**
 * RabbitMQ over AMQP 0-9-1 (amqplib): each event to the durable topic exchange, routing key its type, as a
 * persistent message whose `message_id` is the message id (`<deployment>:<event id>`), on a confirm channel: a batch counts as published
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

  async publish (messages: readonly BusMessage[], signal: AbortSignal): Promise<PublishOutcome> {
    return await this.#broker.use(signal, 'RabbitMQ', async ({ channel }) => {
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
      // RabbitMQ keeps no message ids: it never says it held one already
      return { duplicates: [] }
    })
  }

  async close (): Promise<void> {
    await this.#broker.close()
  }

  async #connect (lost: () => void): Promise<Connected> {
    const connection = await amqp.connect(this.#settings.url, { timeout: BROKER_TIMEOUT_MS, clientProperties: { connection_name: 'petstore' } })
      .catch((error: unknown) => { throw explainRefusal(error, this.#settings.url) })
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

/**
 * amqplib's error for a refused virtual host says only `Expected ConnectionOpenOk`: say which vhost, and why it is
 * refused (missing, or the user has no permission on it). Other errors are as the client wrote them.
 */
export function explainRefusal (error: unknown, url: string): unknown {
  if (!(error instanceof Error) || !error.message.startsWith('Expected ConnectionOpenOk')) return error
  const parsed = new URL(url)
  const vhost = parsed.pathname.length > 1 ? decodeURIComponent(parsed.pathname.slice(1)) : '/'
  const user = parsed.username === '' ? 'guest' : decodeURIComponent(parsed.username)
  return new Error(`RabbitMQ refused the virtual host "${vhost}": it does not exist, or the user "${user}" has no permission on it ` +
    `(rabbitmqctl add_vhost, rabbitmqctl set_permissions), or AMQP_URL names the wrong one (${error.message})`)
}
