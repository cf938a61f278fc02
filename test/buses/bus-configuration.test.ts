import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import type { BusMessage } from '../../src/capabilities/buses/bus.js'
import { RabbitMqBus } from '../../src/capabilities/buses/rabbitmq-bus.js'
import { buildTestApp } from '../helpers/build-app.js'
import { amqpUrl } from '../helpers/buses.js'
import { captureLogs } from '../helpers/log-capture.js'

// Configuration that should not pass silently: what the operator gets told, against the real broker.

const ONE: BusMessage[] = [{ id: 'test:1', eventId: 1, type: 'pet.created', body: Buffer.from('{}') }]

describe('bus configuration', () => {
  test('When AMQP_URL names a virtual host RabbitMQ does not have, then publishing fails saying the vhost is missing or not permitted', async (t) => {
    const vhost = `petstore-missing-${randomBytes(4).toString('hex')}`
    const bus = new RabbitMqBus({ url: `${amqpUrl()}/${vhost}`, exchange: 'petstore.test' })
    t.after(async () => { await bus.close() })
    await assert.rejects(bus.publish(ONE, AbortSignal.timeout(10_000)),
      (error: Error) => error.message.startsWith(`RabbitMQ refused the virtual host "${vhost}": it does not exist, or the user "guest" has no permission on it`))
  })

  test('When NATS_STREAM, NATS_SUBJECT_PREFIX or AMQP_EXCHANGE is set without its URL, then the server warns that it does nothing', async (t) => {
    const logs = captureLogs()
    await buildTestApp(t, { env: { NATS_STREAM: 'STORE', NATS_SUBJECT_PREFIX: 'store.events', AMQP_EXCHANGE: 'store.events' }, logStream: logs.stream })
    const warnings = logs.records().filter((record) => record.level === 40).map((record) => String(record.msg))
    for (const [variable, url] of [['NATS_STREAM', 'NATS_URL'], ['NATS_SUBJECT_PREFIX', 'NATS_URL'], ['AMQP_EXCHANGE', 'AMQP_URL']]) {
      assert.ok(warnings.includes(`${variable} is set but does nothing without ${url ?? ''}`), `${variable}: ${warnings.join(' | ')}`)
    }
  })
})
