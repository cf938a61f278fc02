import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test, type TestContext } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { BusMessage } from '../../src/capabilities/buses/bus.js'
import { NatsBus } from '../../src/capabilities/buses/nats-bus.js'
import { natsUrl } from '../helpers/buses.js'

// The NATS bus itself against the real broker: a batch resolves once JetStream has stored every message (a republished
// one dropped by its Nats-Msg-Id), and rejects when JetStream answers with a refusal instead of an acknowledgement.

function messages (from: number, count: number): BusMessage[] {
  return Array.from({ length: count }, (_, i) => ({ id: `test:${from + i}`, eventId: from + i, type: 'pet.created', body: Buffer.from(JSON.stringify({ id: String(from + i) })) }))
}

/** A bus on a stream and subject prefix of the test's own, and a manager to look into the stream; both gone when the test ends. */
async function ownBus (t: TestContext, streamMaxAgeMs = 86_400_000): Promise<{ bus: NatsBus, manager: JetStreamManager, stream: string, subjectPrefix: string }> {
  const tag = randomBytes(6).toString('hex')
  const stream = `PETSTORE_TEST_${tag}`
  const subjectPrefix = `petstore_test_${tag}.events`
  const bus = new NatsBus({ url: natsUrl(), stream, subjectPrefix, streamMaxAgeMs })
  const connection = await connect({ servers: natsUrl() })
  const manager = await jetstreamManager(connection)
  t.after(async () => {
    await bus.close()
    await manager.streams.delete(stream).catch(() => {})
    await connection.close()
  })
  return { bus, manager, stream, subjectPrefix }
}

describe('the NATS bus', () => {
  test('When a batch is published, then it resolves with every message stored once, in order, a republished batch dropped by its message ids', async (t) => {
    const { bus, manager, stream } = await ownBus(t)
    assert.deepEqual((await bus.publish(messages(1, 700), AbortSignal.timeout(30_000))).duplicates, [])
    const again = await bus.publish(messages(1, 700), AbortSignal.timeout(30_000))
    assert.deepEqual(again.duplicates.map(({ eventId }) => eventId), messages(1, 700).map(({ eventId }) => eventId), 'the broker says which it held already')
    await bus.publish(messages(701, 300), AbortSignal.timeout(30_000))
    const info = await manager.streams.info(stream)
    assert.equal(info.state.messages, 1_000)
    const first = await manager.streams.getMessage(stream, { seq: 1 })
    const last = await manager.streams.getMessage(stream, { seq: 1_000 })
    assert.equal(first?.header.get('Nats-Msg-Id'), 'test:1')
    assert.equal(last?.header.get('Nats-Msg-Id'), 'test:1000')
  })

  test('When JetStream refuses a batch (its stream deleted under it), then publish rejects, and the next publish connects again and stores it', async (t) => {
    const { bus, manager, stream } = await ownBus(t)
    await bus.publish(messages(1, 10), AbortSignal.timeout(30_000))
    await manager.streams.delete(stream)
    // no stream holds the subjects: each message's answer is a 503 status, not an acknowledgement
    await assert.rejects(bus.publish(messages(11, 10), AbortSignal.timeout(30_000)), /JetStream did not store event test:(1[1-9]|20): 503/)
    await bus.publish(messages(11, 10), AbortSignal.timeout(30_000))
    const info = await manager.streams.info(stream)
    assert.equal(info.state.messages, 10)
  })

  test('When the service creates the stream, then it keeps messages for the configured maximum age', async (t) => {
    const { bus, manager, stream } = await ownBus(t, 3 * 86_400_000)
    await bus.publish(messages(1, 1), AbortSignal.timeout(30_000))
    const info = await manager.streams.info(stream)
    assert.equal(info.config.max_age, 3 * 86_400_000 * 1_000_000, 'nanoseconds')
  })

  test('When the stream exists with subjects that miss the prefix, then publish rejects naming the stream, its subjects and the subject it would need', async (t) => {
    const { bus, manager, stream, subjectPrefix } = await ownBus(t)
    await manager.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.other.>`], storage: 'file' })
    await assert.rejects(bus.publish(messages(1, 3), AbortSignal.timeout(30_000)),
      (error: Error) => error.message.includes(`the stream ${stream} holds the subjects ${stream.toLowerCase()}.other.>, not ${subjectPrefix}.pet.created`))
    assert.equal((await manager.streams.info(stream)).state.messages, 0)
  })
})
