import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, createdPet, type TestApp } from '../helpers/build-app.js'
import { freshDatabaseUrl, requiresPostgres } from '../helpers/databases.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' }
const PETS = 40
const ENDPOINTS = 3

async function deliveredBy (api: TestApp): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric('petstore_webhook_deliveries_total')?.get()
  return (metric?.values ?? []).filter((value) => value.labels.outcome === 'delivered').reduce((sum, value) => sum + value.value, 0)
}

describe('webhooks on several instances (postgres)', requiresPostgres(), () => {
  test(`When two instances on one database deliver to ${ENDPOINTS} endpoints, then each endpoint gets each event exactly once, in id order`, async (t) => {
    const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, async () => await webhookReceiver(t)))
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const a = await buildTestApp(t, { databaseUrl, env: ENV })
    const b = await buildTestApp(t, { databaseUrl, withKey: false, env: ENV })
    const instances = [a, { ...b, key: a.key, auth: a.auth }]
    for (const receiver of receivers) await a.app.webhookStore.createWebhookEndpoint({ name: 'r', url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())

    await Promise.all(Array.from({ length: PETS }, async (_, i) => await createdPet(instances[i % 2] as TestApp, { name: `Pet ${i}`, categoryId: i })))
    for (const receiver of receivers) await receiver.waitFor(PETS, 30_000)
    await new Promise((resolve) => setTimeout(resolve, 500))

    for (const receiver of receivers) {
      const ids = receiver.received.map((request) => Number(request.headers['webhook-id']))
      assert.equal(ids.length, PETS, 'no event is delivered twice')
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'one endpoint\'s deliveries arrive in id order')
    }
    const split = [await deliveredBy(a), await deliveredBy(b)]
    assert.equal(split[0]! + split[1]!, PETS * ENDPOINTS)
    t.diagnostic(`deliveries made by instance A: ${split[0]}, by instance B: ${split[1]}`)
  })
})
