import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BUS_LEASE_MARGIN_MS, BUS_LEASE_MS } from '../../src/capabilities/buses/bus-relay.js'
import { createBusPositionStore } from '../../src/capabilities/buses/store/create-bus-position-store.js'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { amqpUrl, AMQP_ADDRESS, natsReader, natsUrl, NATS_ADDRESS, rabbitMqReader, type BusReader } from '../helpers/buses.js'
import { followFeed } from '../helpers/events.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { allEventsOver, bearer, loadEnv, strongApiKey } from '../helpers/live-server.js'
import { captureLogs, type CapturedLogs } from '../helpers/log-capture.js'
import { serverProcesses } from '../helpers/processes.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// One bus, several instances on one database: one publishes at a time (the lease), a publisher that cannot reach
// its broker hands the bus over, and a batch never outlives its lease. Counted where nothing deduplicates.

async function createPets (api: TestApp, count: number, tag: string): Promise<void> {
  for (let n = 0; n < count; n++) {
    const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `${tag}-${n}`, categoryId: 1 }) })
    assert.equal(res.statusCode, 201, res.body)
  }
}

/** Every event id of a live server's feed, in order. */
async function feedIdsOver (baseUrl: string, apiKey: string): Promise<string[]> {
  return (await allEventsOver(baseUrl, apiKey)).map(({ id }) => String(id))
}

async function feedIds (api: TestApp): Promise<string[]> {
  return (await followFeed(api)).events.map(({ id }) => String(id))
}

/** Waits until the consumer has seen each of `ids`; resolves to the ms it took, or fails after `ms`. */
async function arrivalOf (reader: BusReader, ids: readonly string[], ms: number): Promise<number> {
  const started = performance.now()
  const seen = (): number => { const got = new Set(reader.received.map(({ eventId }) => eventId)); return ids.filter((id) => got.has(id)).length }
  while (seen() < ids.length) {
    assert.ok(performance.now() - started < ms, `${seen()} of ${ids.length} events arrived within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return performance.now() - started
}

async function counterOf (api: TestApp, name: string, bus: string): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric(name)?.get()
  return metric?.values.find(({ labels }) => labels.bus === bus)?.value ?? Number.NaN
}

/** Waits (up to 10 s) until an instance holds the bus's lease. */
async function untilPublisher (api: TestApp): Promise<void> {
  const positions = createBusPositionStore(api.app.database)
  const deadline = performance.now() + 10_000
  while ((await positions.listBuses(Date.now()))[0]?.publisher === undefined) {
    assert.ok(performance.now() < deadline, 'no instance took the lease')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function messagesOf (logs: CapturedLogs): string[] {
  return logs.records().map((record) => String(record.msg))
}

for (const store of testStores()) {
  describe(`one bus, several instances (${store})`, () => {
    for (const outage of ['refuse', 'blackhole'] as const) {
      test(`When the instance holding the bus cannot reach its broker (${outage}), then it gives the lease up, says so, and another instance publishes every event within seconds`, async (t) => {
        const away = await startTcpProxy(t, NATS_ADDRESS)
        away.cut(outage)
        const reader = await natsReader(t)
        const brokenLogs = captureLogs()
        const broken = await buildTestApp(t, { store, env: { ...reader.env, NATS_URL: natsUrl(away.port) }, logStream: brokenLogs.stream })
        await createPets(broken, 20, 'first')
        // the broken instance woke on its own commits and took the lease (an unanswered attempt holds it until the
        // batch's lease ends; a refused one gives it back at once); a healthy one joins
        if (outage === 'blackhole') await untilPublisher(broken)
        const healthyLogs = captureLogs()
        const healthy = await buildTestApp(t, { databaseUrl: broken.databaseUrl, env: reader.env, logStream: healthyLogs.stream })
        // a refused connection fails at once; an unanswered one when the batch's lease ends
        const took = await arrivalOf(reader, await feedIds(healthy), (outage === 'blackhole' ? BUS_LEASE_MS : 0) + 2_500)
        t.diagnostic(`${store}, ${outage}: every event on the bus ${Math.round(took)} ms after the healthy instance started`)
        assert.ok(messagesOf(brokenLogs).some((msg) => /could not publish to NATS JetStream.*gave the lease up so that another instance publishes/.test(msg)), 'the broken instance says it gave the bus up')
        // an unanswered connection holds the bus until the batch's lease ends: the healthy instance waits on it, saying so
        if (outage === 'blackhole') {
          assert.ok(healthyLogs.records().some((record) => typeof record.holder === 'string' && typeof record.leaseUntil === 'string' && /holds the lease until/.test(String(record.msg))),
            'the waiting instance logs whose lease it waits on, and until when')
        }
        assert.ok(await counterOf(broken, 'petstore_bus_lease_handovers_total', 'nats') >= 1)
        // the broken instance keeps failing, and keeps out of the way: once the healthy one's lease has lapsed (idle),
        // the broken one hears of the next commits first (its own) but leaves the bus to the healthy one
        await new Promise((resolve) => setTimeout(resolve, BUS_LEASE_MS + 500))
        await createPets(broken, 5, 'later')
        const later = await arrivalOf(reader, await feedIds(healthy), 2_000)
        t.diagnostic(`${store}, ${outage}: later events on the bus within ${Math.round(later)} ms`)
        assert.deepEqual(reader.received.map(({ eventId }) => eventId), await feedIds(healthy), 'each once, in id order')
      })
    }

    test('When two server processes share a bus and nothing fails, then each event is published once: RabbitMQ, which deduplicates nothing, delivers each once', async (t) => {
      const reader = await rabbitMqReader(t)
      const servers = serverProcesses(t)
      const apiKey = strongApiKey()
      const env = { ...loadEnv(await freshDatabaseUrl(t, store), apiKey), ...reader.env }
      const instances = await Promise.all([servers.start(env), servers.start(env)])
      for (let round = 0; round < 5; round++) {
        await Promise.all(instances.flatMap((server) => Array.from({ length: 20 }, async (_, n) => {
          const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet-${round}-${n}`, categoryId: 1 }) })
          assert.equal(res.status, 201)
        })))
      }
      const feed = await feedIdsOver(instances[0].baseUrl, apiKey)
      assert.equal(feed.length, 200)
      await arrivalOf(reader, feed, 30_000)
      // a publisher that should not have published would add its copies after the first arrivals
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      assert.deepEqual(reader.received.map(({ eventId }) => eventId), feed, 'every event delivered once, in id order')
    })
  })
}

for (const store of testStores()) {
  describe(`a broker that never answers (${store})`, () => {
    test('When a broker accepts connections but never answers, then the service starts and answers, each batch fails before its lease ends, and it stops promptly', async (t) => {
      const nats = await startTcpProxy(t, NATS_ADDRESS)
      const rabbitmq = await startTcpProxy(t, AMQP_ADDRESS)
      nats.cut('blackhole')
      rabbitmq.cut('blackhole')
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, env: { NATS_URL: natsUrl(nats.port), AMQP_URL: amqpUrl(rabbitmq.port) }, logStream: logs.stream })
      assert.equal((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
      for (const bus of ['nats', 'rabbitmq']) assert.equal(await counterOf(api, 'petstore_bus_publish_failures_total', bus), 0, 'the series exists from the start, at 0')
      const started = performance.now()
      await createPets(api, 1, 'held')
      const failedAfter = async (bus: string): Promise<number> => {
        while (await counterOf(api, 'petstore_bus_publish_failures_total', bus) === 0) {
          assert.ok(performance.now() - started < 15_000, `${bus} never failed`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        return performance.now() - started
      }
      const [natsMs, rabbitMqMs] = await Promise.all([failedAfter('nats'), failedAfter('rabbitmq')])
      t.diagnostic(`${store}: NATS gave its batch up after ${Math.round(natsMs)} ms, RabbitMQ after ${Math.round(rabbitMqMs)} ms (lease ${BUS_LEASE_MS} ms)`)
      // the broker's own time limits (5 s to connect) would end them only after the lease
      for (const ms of [natsMs, rabbitMqMs]) assert.ok(ms < BUS_LEASE_MS + 500, `a batch ended ${Math.round(ms)} ms after it began, past its lease (${BUS_LEASE_MS} ms)`)
      const budgets = messagesOf(logs).flatMap((msg) => /did not acknowledge 1 events within the lease \((\d+) ms\)/.exec(msg)?.[1] ?? [])
      assert.ok(budgets.length >= 2 && budgets.every((ms) => Number(ms) <= BUS_LEASE_MS - BUS_LEASE_MARGIN_MS), `the failures say the lease bounded them: ${budgets.join(', ')}`)
      assert.equal((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
      const closing = performance.now()
      await api.app.close()
      assert.ok(performance.now() - closing < 3_000, `closed in ${Math.round(performance.now() - closing)} ms`)
    })
  })
}
