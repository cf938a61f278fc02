import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createBusPositionStore } from '../../src/capabilities/buses/store/create-bus-position-store.js'
import { deploymentIdOf } from '../../src/infra/database/deployment-id.js'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { natsReader, rabbitMqReader } from '../helpers/buses.js'
import { execSql, freshDatabaseUrl } from '../helpers/databases.js'
import { followFeed } from '../helpers/events.js'
import { captureLogs } from '../helpers/log-capture.js'

// Two deployments on one broker (staging and production on one NATS account, a laptop with a copied .env): each
// numbers its events from 1, so a message id or a CloudEvents source that is not the deployment's own makes the
// broker drop one deployment's events as the other's duplicates, and consumers mix them up.

async function createPets (api: TestApp, count: number, tag: string): Promise<void> {
  for (let n = 0; n < count; n++) {
    const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `${tag}-${n}`, categoryId: 1 }) })
    assert.equal(res.statusCode, 201, res.body)
  }
}

async function counterOf (api: TestApp, name: string, bus: string): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric(name)?.get()
  return metric?.values.find(({ labels }) => labels.bus === bus)?.value ?? Number.NaN
}

for (const store of testStores()) {
  describe(`deployments sharing a broker (${store})`, { concurrency: true }, () => {
    test('When two deployments publish to one JetStream stream under the same names, then the stream holds every event of both, each under its deployment\'s source', async (t) => {
      const reader = await natsReader(t)
      const production = await buildTestApp(t, { store, env: reader.env })
      const staging = await buildTestApp(t, { store, env: reader.env })
      await createPets(production, 3, 'production')
      await createPets(staging, 3, 'staging')
      // both number their events 1, 2, 3
      assert.deepEqual((await followFeed(production)).events.map(({ id }) => id), (await followFeed(staging)).events.map(({ id }) => id))
      await reader.waitFor(6, 15_000)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const sources = [`urn:uuid:${await deploymentIdOf(production.app.database)}`, `urn:uuid:${await deploymentIdOf(staging.app.database)}`]
      assert.notEqual(sources[0], sources[1])
      const bySource = (source: string): string[] => reader.received.filter(({ cloudEvent }) => cloudEvent.source === source)
        .map(({ cloudEvent }) => (cloudEvent.data as { pet: { name: string } }).pet.name)
      assert.deepEqual(bySource(sources[0] as string), ['production-0', 'production-1', 'production-2'])
      assert.deepEqual(bySource(sources[1] as string), ['staging-0', 'staging-1', 'staging-2'])
      assert.equal(reader.received.length, 6)
      for (const { messageId, cloudEvent } of reader.received) assert.equal(`urn:uuid:${messageId.slice(0, messageId.lastIndexOf(':'))}`, cloudEvent.source, 'the message id is the deployment\'s')
    })

    test('When two deployments publish to one RabbitMQ exchange, then a consumer tells their events apart by source and message id', async (t) => {
      const reader = await rabbitMqReader(t)
      const first = await buildTestApp(t, { store, env: reader.env })
      const second = await buildTestApp(t, { store, env: reader.env })
      await createPets(first, 2, 'first')
      await createPets(second, 2, 'second')
      await reader.waitFor(4, 15_000)
      assert.equal(new Set(reader.received.map(({ messageId }) => messageId)).size, 4)
      assert.equal(new Set(reader.received.map(({ cloudEvent }) => `${String(cloudEvent.source)} ${cloudEvent.id}`)).size, 4)
    })

    test('When another deployment already published under this deployment\'s identity, then the broker\'s "duplicate" is an error: logged, counted and recorded', async (t) => {
      const reader = await natsReader(t)
      const original = await buildTestApp(t, { store, env: reader.env })
      await createPets(original, 3, 'original')
      await reader.waitFor(3, 15_000)
      // a copy of the database under another name: the same deployment id, its own events from 1
      const copyUrl = await freshDatabaseUrl(t, store)
      const prepared = await buildTestApp(t, { databaseUrl: copyUrl })
      await prepared.app.close()
      await execSql(copyUrl, `UPDATE settings SET value = '${await deploymentIdOf(original.app.database)}' WHERE name = 'deployment_id'`)
      const logs = captureLogs()
      const copy = await buildTestApp(t, { databaseUrl: copyUrl, env: reader.env, logStream: logs.stream })
      assert.equal(await counterOf(copy, 'petstore_bus_foreign_duplicates_total', 'nats'), 0, 'the series exists from the start, at 0')
      await createPets(copy, 3, 'copy')
      const deadline = performance.now() + 15_000
      while (await counterOf(copy, 'petstore_bus_foreign_duplicates_total', 'nats') < 3) {
        assert.ok(performance.now() < deadline, 'the copy never reported the duplicates')
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      const reported = logs.records().filter((record) => record.level === 50 && /already held \d+ event\(s\) this deployment had never published/.test(String(record.msg)))
      assert.deepEqual(reported.flatMap((record) => record.eventIds as number[]), [1, 2, 3], 'each logged as an error, with its id')
      const positions = createBusPositionStore(copy.app.database)
      assert.match((await positions.listBuses(Date.now()))[0]?.lastError ?? '', /another deployment publishes under the same identity/)
      // the original's events are what the stream holds: nothing of the copy's got in
      assert.equal(reader.received.length, 3)
    })
  })
}
