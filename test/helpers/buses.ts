import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import amqp from 'amqplib'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { within } from '../../tools/harness/within.js'

/** The brokers this machine kind runs (docs/testing.md). */
export const NATS_ADDRESS = { host: '127.0.0.1', port: 4222 }
export const AMQP_ADDRESS = { host: '127.0.0.1', port: 5672 }
export const natsUrl = (port = NATS_ADDRESS.port): string => `nats://127.0.0.1:${port}`
export const amqpUrl = (port = AMQP_ADDRESS.port): string => `amqp://guest:guest@127.0.0.1:${port}`

/** One message as a consumer received it: its message id, subject or routing key, content type and body. */
export interface ReceivedMessage {
  /** `<deployment id>:<event id>` (Nats-Msg-Id, message_id). */
  messageId: string
  /** The event id the message id ends with. */
  eventId: string
  route: string
  contentType: string
  body: string
  /** The body parsed exactly (int64 beyond 2^53 as bigints). */
  cloudEvent: Record<string, unknown> & { id: string, type: string, data: unknown }
}

export interface BusReader {
  /** The service's environment that publishes where this reader reads. */
  env: Record<string, string>
  received: ReceivedMessage[]
  /** Waits until at least `count` messages have arrived (fails after `ms`). */
  waitFor: (count: number, ms?: number) => Promise<ReceivedMessage[]>
}

function receivedOf (messageId: string, route: string, contentType: string, body: string): ReceivedMessage {
  return { messageId, eventId: messageId.slice(messageId.lastIndexOf(':') + 1), route, contentType, body, cloudEvent: parseJson(body) as ReceivedMessage['cloudEvent'] }
}

function waiter (received: ReceivedMessage[]): BusReader['waitFor'] {
  return async (count, ms = 60_000) => await within(ms, `fewer than ${count} messages arrived (${received.length})`, (async () => {
    while (received.length < count) await new Promise((resolve) => setTimeout(resolve, 20))
    return received
  })())
}

/**
 * A JetStream stream of the test's own (a random name and subject prefix, deleted when the test ends) and an
 * ordered consumer reading it from the start: every message stored, once each, in stream order.
 */
export async function natsReader (t: TestContext, port = NATS_ADDRESS.port): Promise<BusReader> {
  const tag = randomBytes(6).toString('hex')
  const stream = `PETSTORE_TEST_${tag}`
  const subjectPrefix = `petstore_test_${tag}.events`
  const connection = await connect({ servers: natsUrl() })
  const manager = await jetstreamManager(connection)
  // created here, as the service would: the consumer reads it from the start
  await manager.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], storage: 'file' })
  const received: ReceivedMessage[] = []
  const consumer = await jetstream(connection).consumers.get(stream)
  const messages = await consumer.consume()
  const reading = (async () => {
    for await (const message of messages) {
      received.push(receivedOf(message.headers?.get('Nats-Msg-Id') ?? '', message.subject, message.headers?.get('content-type') ?? '', message.string()))
    }
  })()
  t.after(async () => {
    await messages.close()
    await reading.catch(() => {})
    await manager.streams.delete(stream).catch(() => {})
    await connection.close()
  })
  return { env: { NATS_URL: natsUrl(port), NATS_STREAM: stream, NATS_SUBJECT_PREFIX: subjectPrefix }, received, waitFor: waiter(received) }
}

/** A topic exchange of the test's own (deleted when the test ends) with an exclusive queue bound to every routing key, read as it fills. */
export async function rabbitMqReader (t: TestContext, port = AMQP_ADDRESS.port): Promise<BusReader> {
  const exchange = `petstore.test.${randomBytes(6).toString('hex')}`
  const connection = await amqp.connect(amqpUrl())
  const channel = await connection.createChannel()
  await channel.assertExchange(exchange, 'topic', { durable: true })
  const { queue } = await channel.assertQueue('', { exclusive: true })
  await channel.bindQueue(queue, exchange, '#')
  const received: ReceivedMessage[] = []
  await channel.consume(queue, (message) => {
    if (message === null) return
    received.push(receivedOf(String(message.properties.messageId), message.fields.routingKey, String(message.properties.contentType), message.content.toString()))
  }, { noAck: true })
  t.after(async () => {
    await channel.deleteExchange(exchange).catch(() => {})
    await connection.close().catch(() => {})
  })
  return { env: { AMQP_URL: amqpUrl(port), AMQP_EXCHANGE: exchange }, received, waitFor: waiter(received) }
}
