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

    test('When as many endpoints as WEBHOOK_CONCURRENCY accept requests and never answer, then a healthy endpoint is served before their attempts time out', async (t) => {
      const dark = await Promise.all([1, 2].map(async () => await webhookReceiver(t)))
      for (const receiver of dark) receiver.answer(() => 'blackhole')
      const healthy = await webhookReceiver(t)
      const setup = await buildTestApp(t, { store, env: ENV })
      // the dark ones first: the endpoint never served that has the smallest id is claimed first
      for (const [i, receiver] of [...dark, healthy].entries()) {
        await setup.app.webhookStore.createWebhookEndpoint({ name: `receiver-${i}`, url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      }
      await setup.app.close()
      // an attempt times out after a minute: a delivery to the healthy endpoint within half of it did not wait for one
      const api = await buildTestApp(t, { store, databaseUrl: setup.databaseUrl, env: { ...ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '60000' } })

      await createdPet(api, { name: 'Rex', categoryId: 1 })
      await Promise.all(dark.map(async (receiver) => await receiver.waitFor(1, 30_000)))
      await createdPet(api, { name: 'Fido', categoryId: 1 })
      await healthy.waitFor(2, 30_000)
      assert.deepEqual(dark.map((receiver) => receiver.received.length), [1, 1], 'each dark endpoint holds its first delivery; its others wait behind it')
    })

    test('When an endpoint has several deliveries due, then up to WEBHOOK_ENDPOINT_CONCURRENCY are in flight at once', async (t) => {
      const receiver = await webhookReceiver(t)
      receiver.answer(() => ({ status: 204, afterMs: 1_000 }))
      const setup = await buildTestApp(t, { store, env: ENV })
      await setup.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      await setup.app.close()
      const api = await buildTestApp(t, { store, databaseUrl: setup.databaseUrl, env: { ...ENV, WEBHOOK_ENDPOINT_CONCURRENCY: '4' } })
      // all recorded before the dispatcher's turn: one instance's creates are grouped in few commits
      await Promise.all(Array.from({ length: 8 }, async (_, i) => await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })))
      const requests = await receiver.waitFor(8)
      // one at a time, each request would come a second (the answer's delay) after the one before; the first
      // commit may wake the dispatcher alone, so any two arrivals closer than that show requests in flight together
      const arrivals = requests.map((request) => request.at).sort((a, b) => a - b)
      const gaps = arrivals.slice(1).map((at, i) => at - (arrivals[i] ?? at))
      assert.ok(gaps.some((gap) => gap < 900), `no two requests in flight at once: ${arrivals.map((at) => at - (arrivals[0] ?? at)).join(', ')} ms`)
      assert.deepEqual(requests.map((request) => request.headers['webhook-id']).sort(), [...new Set(requests.map((request) => request.headers['webhook-id']))].sort(), 'each event once')
    })
  })
}
