import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadThenKill } from '../helpers/crash-load.js'
import { natsReader, rabbitMqReader, type BusReader } from '../helpers/buses.js'
import { freshDatabaseUrl, requiresPostgres, testStores } from '../helpers/databases.js'
import { allEventsOver, bearer, loadEnv, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses, within, type ServerProcess } from '../helpers/processes.js'

// The relay's promise under SIGKILL: the position moves only after the broker acknowledged, so a process killed
// at any moment of a burst loses no event; a dead instance's bus is taken over when its lease ends.

const KILLS = 5

/** Every event id of a live server's feed, in order. */
async function feedIdsOver (baseUrl: string, apiKey: string): Promise<string[]> {
  return (await allEventsOver(baseUrl, apiKey)).map(({ id }) => String(id))
}

async function createPetsOver (server: ServerProcess, apiKey: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet-${n}`, categoryId: 1 }) })
    assert.equal(res.status, 201)
  }
}

const firstArrivals = (reader: BusReader): string[] => [...new Set(reader.received.map(({ eventId }) => eventId))]

/** Waits (up to 60 s) until the consumer has seen every event of the feed. */
async function untilAllArrived (reader: BusReader, feed: readonly string[]): Promise<void> {
  await within(60_000, `${firstArrivals(reader).length} of ${feed.length} events arrived`, (async () => {
    while (firstArrivals(reader).length < feed.length) await new Promise((resolve) => setTimeout(resolve, 50))
  })())
}

for (const store of testStores()) {
  describe(`the buses under SIGKILL (${store})`, () => {
    test(`When the server is SIGKILLed ${KILLS} times during bursts of creates, then after each restart every event reaches both buses, in id order, and JetStream holds each once`, async (t) => {
      const nats = await natsReader(t)
      const rabbitmq = await rabbitMqReader(t)
      const servers = serverProcesses(t)
      const apiKey = strongApiKey()
      const env = { ...loadEnv(await freshDatabaseUrl(t, store), apiKey), ...nats.env, ...rabbitmq.env }
      let acknowledged = 0
      for (let kill = 0; kill < KILLS; kill++) acknowledged += (await loadThenKill(await servers.start(env), apiKey, `kill-${kill}`, false)).acknowledged.length
      const server = await servers.start(env)
      const feed = await feedIdsOver(server.baseUrl, apiKey)
      assert.ok(feed.length >= acknowledged)
      await untilAllArrived(nats, feed)
      await untilAllArrived(rabbitmq, feed)
      assert.deepEqual(nats.received.map(({ eventId }) => eventId), feed, 'JetStream holds every event once, in id order')
      assert.deepEqual(firstArrivals(rabbitmq), feed, 'RabbitMQ delivered every event, first in id order')
      t.diagnostic(`${store}: ${acknowledged} creates acknowledged over ${KILLS} kills, ${feed.length} events; ` +
        `RabbitMQ delivered ${rabbitmq.received.length - feed.length} again after the kills`)
    })

    test('When the instance publishing a bus is SIGKILLed and started again, then the bus publishes again within 5 s of its readiness', async (t) => {
      const nats = await natsReader(t)
      const servers = serverProcesses(t)
      const apiKey = strongApiKey()
      const env = { ...loadEnv(await freshDatabaseUrl(t, store), apiKey), ...nats.env }
      const first = await servers.start(env)
      await createPetsOver(first, apiKey, 10)
      // published: the dead instance's lease was renewed just now, and nobody released it
      await untilAllArrived(nats, await feedIdsOver(first.baseUrl, apiKey))
      await first.kill()
      const second = await servers.start(env)
      const ready = performance.now()
      await createPetsOver(second, apiKey, 1)
      await untilAllArrived(nats, await feedIdsOver(second.baseUrl, apiKey))
      const took = performance.now() - ready
      t.diagnostic(`${store}: publishing again ${Math.round(took)} ms after the restarted instance was ready`)
      assert.ok(took < 5_000, `the bus was silent ${Math.round(took)} ms after the restart`)
    })
  })
}

describe('two PostgreSQL instances', requiresPostgres(), () => {
  test('When two instances publish to JetStream and the one publishing is SIGKILLed, then the other takes the bus over and each event is in the stream once, in id order', async (t) => {
    const nats = await natsReader(t)
    const servers = serverProcesses(t)
    const apiKey = strongApiKey()
    const env = { ...loadEnv(await freshDatabaseUrl(t, 'postgres'), apiKey), ...nats.env }
    const [first, second] = await Promise.all([servers.start(env), servers.start(env)])
    // creates through both: each instance's commits wake the other (LISTEN); one publishes
    for (let round = 0; round < 10; round++) {
      await Promise.all([first, second].flatMap((server) => Array.from({ length: 10 }, async (_, n) => {
        const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet-${round}-${n}`, categoryId: n }) })
        assert.equal(res.status, 201)
      })))
    }
    await untilAllArrived(nats, await feedIdsOver(second.baseUrl, apiKey))
    // the one killed may hold the lease: the other waits for it to end, then publishes on
    await loadThenKill(first, apiKey, 'burst', false)
    const feed = await feedIdsOver(second.baseUrl, apiKey)
    await untilAllArrived(nats, feed)
    assert.deepEqual(nats.received.map(({ eventId }) => eventId), feed)
  })
})
