import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, createdPet, type TestApp } from '../helpers/build-app.js'
import { freshDatabaseUrl, requiresPostgres } from '../helpers/databases.js'
import { followFeed } from '../helpers/events.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

// two slots an instance and more endpoints than that: one instance cannot hold every endpoint, so both deliver
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_CONCURRENCY: '2', WEBHOOK_ENDPOINT_CONCURRENCY: '1', RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' }
const PETS = 40
const ENDPOINTS = 4
// each answer held a little, so an endpoint's backlog keeps its slot busy while the other instance polls
const ANSWER_AFTER_MS = 20

/** The deliveries an instance made, per endpoint id, as its own metrics count them. */
async function deliveredBy (api: TestApp): Promise<Map<string, number>> {
  const metric = await api.app.metrics.registry.getSingleMetric('petstore_webhook_deliveries_total')?.get()
  const perEndpoint = new Map<string, number>()
  for (const value of metric?.values ?? []) {
    if (value.labels.outcome !== 'delivered') continue
    const endpoint = String(value.labels.endpoint_id)
    perEndpoint.set(endpoint, (perEndpoint.get(endpoint) ?? 0) + value.value)
  }
  return perEndpoint
}

function total (perEndpoint: Map<string, number>): number {
  return [...perEndpoint.values()].reduce((sum, count) => sum + count, 0)
}

describe('webhooks on several instances (postgres)', requiresPostgres(), () => {
  test(`When two instances on one database deliver to ${ENDPOINTS} endpoints, then each endpoint gets each event exactly once, in id order, and both instances delivered`, async (t) => {
    const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, async () => await webhookReceiver(t)))
    for (const receiver of receivers) receiver.answer(() => ({ status: 204, afterMs: ANSWER_AFTER_MS }))
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const a = await buildTestApp(t, { databaseUrl, env: ENV })
    const b = await buildTestApp(t, { databaseUrl, withKey: false, env: ENV })
    const instances = [a, { ...b, key: a.key, auth: a.auth }]
    const endpointIds: number[] = []
    for (const receiver of receivers) {
      const endpoint = await a.app.webhookStore.createWebhookEndpoint({ name: 'r', url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      endpointIds.push(endpoint.id)
    }

    await Promise.all(Array.from({ length: PETS }, async (_, i) => await createdPet(instances[i % 2] as TestApp, { name: `Pet ${i}`, categoryId: i })))
    for (const receiver of receivers) await receiver.waitFor(PETS, 30_000)
    // a duplicate would come after the last first delivery: give it time to arrive
    await new Promise((resolve) => setTimeout(resolve, 500))

    // what was recorded: every event of the feed, each an event the endpoints asked for
    const recorded = (await followFeed(a)).events
    assert.equal(recorded.length, PETS)
    assert.ok(recorded.every((event) => event.type === 'pet.created'))
    const recordedIds = recorded.map((event) => event.id)
    for (const receiver of receivers) {
      const ids = receiver.received.map((request) => Number(request.headers['webhook-id']))
      assert.deepEqual(ids, recordedIds, 'an endpoint gets exactly the recorded events, each once, in id order')
      assert.equal(ids.length, PETS, 'no event is delivered twice')
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'one endpoint\'s deliveries arrive in id order')
    }

    const [byA, byB] = [await deliveredBy(a), await deliveredBy(b)]
    assert.equal(total(byA) + total(byB), PETS * ENDPOINTS)
    for (const id of endpointIds) {
      assert.equal((byA.get(String(id)) ?? 0) + (byB.get(String(id)) ?? 0), PETS, `endpoint ${id}: the two instances' deliveries add up to its events`)
    }
    assert.ok(total(byA) > 0 && total(byB) > 0, `both instances delivered: A ${total(byA)}, B ${total(byB)}`)
    t.diagnostic(`deliveries made by instance A: ${total(byA)}, by instance B: ${total(byB)}`)
  })
})
