import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { buildTestApp, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { AMQP_ADDRESS, NATS_ADDRESS, natsReader, rabbitMqReader, type BusReader } from '../helpers/buses.js'
import { followFeed } from '../helpers/events.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// A broker that is away (at start, or cut mid-burst) costs the API nothing, and nothing is lost: the backlog
// waits in the outbox and arrives, in order, when the broker is back. Each service reaches its broker
// through a TCP proxy the test cuts and heals.

const BROKERS = {
  nats: { reader: natsReader, address: NATS_ADDRESS },
  rabbitmq: { reader: rabbitMqReader, address: AMQP_ADDRESS }
} as const

async function createPets (api: TestApp, from: number, count: number): Promise<void> {
  const answers = await Promise.all(Array.from({ length: count }, async (_, n) => await api.app.inject({
    method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `pet-${from + n}`, categoryId: 1 })
  })))
  for (const res of answers) assert.equal(res.statusCode, 201, res.body)
}

/** The ids a consumer saw, each at its first arrival: what it processes when it skips an id it has already seen. */
function firstArrivals (reader: BusReader): string[] {
  return [...new Set(reader.received.map(({ eventId }) => eventId))]
}

/** Waits until the consumer has seen every event of the feed, then checks it saw them in id order (NATS: each once). */
async function assertEveryEventArrives (api: TestApp, reader: BusReader, broker: keyof typeof BROKERS): Promise<void> {
  const feed = (await followFeed(api)).events.map(({ id }) => String(id))
  const deadline = Date.now() + 60_000
  while (firstArrivals(reader).length < feed.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual(firstArrivals(reader), feed, 'every event arrived, first in id order')
  // JetStream drops an event published again (Nats-Msg-Id); RabbitMQ may deliver a batch again after the cut, in order
  if (broker === 'nats') assert.deepEqual(reader.received.map(({ eventId }) => eventId), feed, 'JetStream holds each event once')
}

async function metricValue (api: TestApp, name: string): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric(name)?.get()
  return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0
}

/** Waits (up to 30 s) until the metric's sum satisfies `holds`. */
async function untilMetric (api: TestApp, name: string, holds: (value: number) => boolean): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!holds(await metricValue(api, name)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.ok(holds(await metricValue(api, name)), `${name} is ${await metricValue(api, name)}`)
}

async function outageApp (t: TestContext, store: StoreKind, broker: keyof typeof BROKERS): Promise<{ api: TestApp, reader: BusReader, proxy: Awaited<ReturnType<typeof startTcpProxy>> }> {
  const proxy = await startTcpProxy(t, BROKERS[broker].address)
  const reader = await BROKERS[broker].reader(t, proxy.port)
  const api = await buildTestApp(t, { store, env: reader.env })
  return { api, reader, proxy }
}

for (const store of testStores()) {
  describe(`a broker away (${store})`, { concurrency: true }, () => {
    for (const broker of ['nats', 'rabbitmq'] as const) {
      test(`When ${broker} is unreachable at start, then the service starts and answers, and the backlog arrives in order once it is reachable`, async (t) => {
        const proxy = await startTcpProxy(t, BROKERS[broker].address)
        proxy.cut('refuse')
        const reader = await BROKERS[broker].reader(t, proxy.port)
        const api = await buildTestApp(t, { store, env: reader.env })
        await createPets(api, 0, 60)
        assert.equal((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
        // the relay has tried and failed, and says so
        await untilMetric(api, 'petstore_bus_publish_failures_total', (failures) => failures > 0)
        assert.equal(reader.received.length, 0)
        assert.equal(await metricValue(api, 'petstore_bus_waiting_events'), 60)
        proxy.heal()
        await assertEveryEventArrives(api, reader, broker)
        // the position moves once the broker's acknowledgement is back, which may come after the consumer's copy
        await untilMetric(api, 'petstore_bus_waiting_events', (waiting) => waiting === 0)
      })

      test(`When the connection to ${broker} is cut in the middle of a burst, then no event is lost and they arrive in order`, async (t) => {
        const { api, reader, proxy } = await outageApp(t, store, broker)
        const burst = (async () => {
          for (let round = 0; round < 20; round++) await createPets(api, round * 20, 20)
        })()
        while (reader.received.length < 40) await new Promise((resolve) => setTimeout(resolve, 5))
        proxy.cut('refuse')
        await new Promise((resolve) => setTimeout(resolve, 300))
        proxy.heal()
        await burst
        await assertEveryEventArrives(api, reader, broker)
      })
    }
  })
}
