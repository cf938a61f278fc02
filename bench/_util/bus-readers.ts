import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import amqp from 'amqplib'

/** The brokers this machine kind runs (docs/testing.md); `BENCH_NATS_URL` and `BENCH_AMQP_URL` name others. */
export const BENCH_NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222'
export const BENCH_AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'

/** One message as the bench's consumer received it. */
export interface BusReceipt {
  /** The CloudEvent's subject: the pet's (or order's) id. */
  subject: string
  type: string
  /** When the consumer had it (the runner's `performance.now()`). */
  at: number
  /** When the broker stored it (JetStream's stream timestamp, epoch ms); undefined for RabbitMQ, which does not say. */
  storedAt: number | undefined
}

/** A consumer of one bus, reading from a stream or exchange of the run's own. */
export interface BusReader {
  readonly bus: 'nats' | 'rabbitmq'
  /** The service's variables that publish where this reader reads. */
  readonly env: Record<string, string>
  readonly receipts: BusReceipt[]
  /** Resolves true once every one of `subjects` (of `pet.created`) has arrived, false after `ms`. */
  waitForSubjects: (subjects: ReadonlySet<string>, ms: number) => Promise<boolean>
  /** Stops reading and deletes the stream or the exchange. */
  close: () => Promise<void>
}

function receiptOf (body: string, at: number, storedAt: number | undefined): BusReceipt {
  const event = JSON.parse(body) as { subject?: unknown, type?: unknown }
  return { subject: String(event.subject), type: String(event.type), at, storedAt }
}

function waiter (receipts: readonly BusReceipt[]): BusReader['waitForSubjects'] {
  return async (subjects, ms) => {
    const deadline = performance.now() + ms
    const missing = new Set(subjects)
    let seen = 0
    for (;;) {
      for (; seen < receipts.length; seen++) {
        const receipt = receipts[seen]
        if (receipt?.type === 'pet.created') missing.delete(receipt.subject)
      }
      if (missing.size === 0) return true
      if (performance.now() > deadline) return false
      await sleep(20)
    }
  }
}

/**
 * A JetStream stream of the run's own (`PETSTORE_BENCH_<hex>`, subjects `petstore_bench_<hex>.events.>`, file storage,
 * as the service creates it) read from its start by an ordered consumer; deleted by `close`.
 */
export async function natsBenchReader (): Promise<BusReader> {
  const tag = randomBytes(6).toString('hex')
  const stream = `PETSTORE_BENCH_${tag}`
  const subjectPrefix = `petstore_bench_${tag}.events`
  const connection = await connect({ servers: BENCH_NATS_URL, name: 'petstore-bench' })
  try {
    const manager = await jetstreamManager(connection)
    await manager.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], storage: 'file' })
    const receipts: BusReceipt[] = []
    const messages = await (await jetstream(connection).consumers.get(stream)).consume()
    const reading = (async () => {
      for await (const message of messages) receipts.push(receiptOf(message.string(), performance.now(), Number(message.timestampNanos / 1_000n) / 1_000))
    })()
    return {
      bus: 'nats',
      env: { NATS_URL: BENCH_NATS_URL, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: subjectPrefix },
      receipts,
      waitForSubjects: waiter(receipts),
      close: async () => {
        await messages.close()
        await reading.catch(() => {})
        await manager.streams.delete(stream).catch(() => {})
        await connection.close()
      }
    }
  } catch (error) {
    await connection.close().catch(() => {})
    throw error
  }
}

/** A durable topic exchange of the run's own (`petstore.bench.<hex>`) with an exclusive queue bound to every routing key, read as it fills; deleted by `close`. */
export async function rabbitMqBenchReader (): Promise<BusReader> {
  const exchange = `petstore.bench.${randomBytes(6).toString('hex')}`
  const connection = await amqp.connect(BENCH_AMQP_URL, { clientProperties: { connection_name: 'petstore-bench' } })
  try {
    const channel = await connection.createChannel()
    await channel.assertExchange(exchange, 'topic', { durable: true })
    const { queue } = await channel.assertQueue('', { exclusive: true })
    await channel.bindQueue(queue, exchange, '#')
    const receipts: BusReceipt[] = []
    await channel.consume(queue, (message) => {
      if (message !== null) receipts.push(receiptOf(message.content.toString(), performance.now(), undefined))
    }, { noAck: true })
    return {
      bus: 'rabbitmq',
      env: { AMQP_URL: BENCH_AMQP_URL, AMQP_EXCHANGE: exchange },
      receipts,
      waitForSubjects: waiter(receipts),
      close: async () => {
        await channel.deleteExchange(exchange).catch(() => {})
        await connection.close().catch(() => {})
      }
    }
  } catch (error) {
    await connection.close().catch(() => {})
    throw error
  }
}

/** A reader on each bus, closed (and its stream and exchange deleted) after `work`, however it ends. */
export async function withBusReaders<T> (work: (readers: { nats: BusReader, rabbitmq: BusReader }) => Promise<T>): Promise<T> {
  const nats = await natsBenchReader()
  try {
    const rabbitmq = await rabbitMqBenchReader()
    try {
      return await work({ nats, rabbitmq })
    } finally {
      await rabbitmq.close()
    }
  } finally {
    await nats.close()
  }
}
