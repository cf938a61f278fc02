import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { AMQP_ADDRESS, NATS_ADDRESS, natsReader, rabbitMqReader } from '../helpers/buses.js'
import { mockDate } from '../helpers/clock.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// A bus never further behind than retention: when retention deleted events a bus had not published (its broker
// away for longer than EVENT_RETENTION_DAYS), the bus skips past them, says so, and publishes on. One test at a
// time: Date is mocked for the whole process.

const BROKERS = {
  nats: { reader: natsReader, address: NATS_ADDRESS },
  rabbitmq: { reader: rabbitMqReader, address: AMQP_ADDRESS }
} as const

async function createPets (api: TestApp, from: number, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `pet-${from + n}`, categoryId: 1 }) })
    assert.equal(res.statusCode, 201, res.body)
  }
}

async function metricValue (api: TestApp, name: string): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric(name)?.get()
  return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0
}

/** Waits (up to 30 s of real time) until the metric's sum satisfies `holds`. */
async function untilMetric (api: TestApp, name: string, holds: (value: number) => boolean): Promise<void> {
  for (let tries = 0; tries < 600 && !holds(await metricValue(api, name)); tries++) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.ok(holds(await metricValue(api, name)), `${name} is ${await metricValue(api, name)}`)
}

for (const store of testStores()) {
  describe(`a bus behind retention (${store})`, () => {
    for (const broker of ['nats', 'rabbitmq'] as const) {
      test(`When ${broker} is away for longer than event retention, then the bus skips past the deleted events, says so, and publishes on`, async (t) => {
        // the clock moved, not slept: Date is mocked for the app, the relay's lease and the store's stamps alike
        mockDate(t)
        const proxy = await startTcpProxy(t, BROKERS[broker].address)
        proxy.cut('refuse')
        const reader = await BROKERS[broker].reader(t, proxy.port)
        const api = await buildTestApp(t, { store, env: { ...reader.env, EVENT_RETENTION_DAYS: '1' } })
        await createPets(api, 0, 3)
        await untilMetric(api, 'petstore_bus_publish_failures_total', (failures) => failures > 0)
        t.mock.timers.tick(86_400_000 + 60_000)
        assert.equal(await api.app.eventRetention.purge(), 3)
        await createPets(api, 3, 2)
        proxy.heal()
        await reader.waitFor(2)
        assert.deepEqual(reader.received.map(({ cloudEvent }) => (cloudEvent.data as { pet: { name: string } }).pet.name), ['pet-3', 'pet-4'], 'only the events retention kept')
        await untilMetric(api, 'petstore_bus_retention_skips_total', (skips) => skips === 1)
      })
    }
  })
}
