import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  RATE_LIMIT_MAX: '0'
}
const ENDPOINTS = 12
// each receiver takes this long an answer: every endpoint always has more work than one slot can do
const ANSWER_MS = 100
const CREATES_PER_S = 20
const CREATING_MS = 9_000

for (const store of testStores()) {
  describe(`webhook endpoints served in turn (${store})`, () => {
    test('When more endpoints than WEBHOOK_CONCURRENCY always have work, then every one is served while the events keep coming', async (t) => {
      const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, async () => await webhookReceiver(t)))
      for (const receiver of receivers) receiver.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      const setup = await buildTestApp(t, { store, env: ENV })
      for (const [i, receiver] of receivers.entries()) {
        await setup.app.webhookStore.createWebhookEndpoint({ name: `receiver-${i}`, url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      }
      await setup.app.close()
      const api = await buildTestApp(t, { store, databaseUrl: setup.databaseUrl, env: { ...ENV, WEBHOOK_CONCURRENCY: '2' } })

      const until = Date.now() + CREATING_MS
      for (let i = 0; Date.now() < until; i++) {
        await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })
        await delay(1000 / CREATES_PER_S)
      }
      const served = receivers.map((receiver) => receiver.received.length)
      assert.ok(served.every((count) => count > 0), `an endpoint was never served while events kept coming: ${served.join(', ')}`)
    })
  })
}
