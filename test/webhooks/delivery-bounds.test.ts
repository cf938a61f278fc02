import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { WebhookSender } from '../../src/capabilities/webhooks/webhook-sender.js'
import { loadConfig } from '../../src/infra/config/config.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { execSql } from '../helpers/databases.js'
import { openStores } from '../helpers/stores.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

// the bounds of delivery, each proved on its own: failing endpoints' half of the slots, the dispatcher's
// WEBHOOK_ENDPOINT_CONCURRENCY, and the sender's connections per origin (which would otherwise hide each other)
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0' }

for (const store of testStores()) {
  describe(`webhook delivery bounds (${store})`, () => {
    test('When more endpoints than the slots fail by never answering, then at most half of WEBHOOK_CONCURRENCY serve them at once and a healthy endpoint\'s delivery goes through before their attempts time out', async (t) => {
      // two slots, and two more for endpoints whose attempts are slow: four dark endpoints could take all of them
      const dark = await Promise.all([1, 2, 3, 4].map(async () => await webhookReceiver(t)))
      for (const receiver of dark) receiver.answer(() => 'blackhole')
      const healthy = await webhookReceiver(t)
      const warmUp = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_RETRY_SCHEDULE: Array(10).fill('100ms').join(',') } })
      // the dark ones first: among endpoints never served, the smallest id is claimed first
      const ids = []
      for (const [i, receiver] of [...dark, healthy].entries()) {
        ids.push((await warmUp.app.webhookStore.createWebhookEndpoint({ name: `receiver-${i}`, url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())).id)
      }
      // each dark endpoint times out once, for real: it is failing, and its retry is due within 100 ms
      await createdPet(warmUp, { name: 'Rex', categoryId: 1 })
      await eventually(async () => (await warmUp.app.webhookStore.listWebhookEndpoints()).filter((endpoint) => endpoint.lastFailureAt !== null).length === dark.length,
        'every dark endpoint has failed once')
      await warmUp.app.close()
      const before = dark.map((receiver) => receiver.received.length)

      // now an attempt times out after 30 s: a healthy delivery within 10 s did not wait for one
      const api = await buildTestApp(t, { store, databaseUrl: warmUp.databaseUrl, env: { ...ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '30000' } })
      await eventually(async () => dark.some((receiver, i) => receiver.received.length > (before[i] ?? 0)), 'a dark endpoint is tried again')
      // long enough for the slots and the slow ones' room to fill, were failing endpoints not bounded (each is slow after 500 ms)
      await delay(1_500)
      const pet = await createdPet(api, { name: 'Fido', categoryId: 1 })
      const sent = Date.now()
      await healthy.waitFor(2, 10_000).catch(() => {
        assert.fail(`the healthy endpoint's delivery did not go through within 10 s: dark endpoints tried since the restart ${JSON.stringify(dark.map((receiver, i) => receiver.received.length - (before[i] ?? 0)))}`)
      })

      assert.equal(JSON.parse(healthy.received[1]?.body ?? '{}').data?.pet?.id, pet.id)
      const tried = dark.filter((receiver, i) => receiver.received.length > (before[i] ?? 0)).length
      assert.equal(tried, 1, 'dark endpoints served at once after the restart: at most half of WEBHOOK_CONCURRENCY (1 of 2), each holding its attempt')
      assert.ok(Date.now() - sent < 10_000)
    })

    test('When an endpoint has more deliveries due than WEBHOOK_ENDPOINT_CONCURRENCY, then the dispatcher sends no more than that at once, so none waits for a connection and times out unanswered', async (t) => {
      const receiver = await webhookReceiver(t)
      // each answered well within the time limit; a request that waited for a connection behind two rounds would not be
      receiver.answer(() => ({ status: 204, afterMs: 500 }))
      const stores = await openStores(t, store)
      const { id } = await stores.webhooks.createWebhookEndpoint({ name: 'slowish', url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      for (let i = 0; i < 10; i++) await stores.pets.createPet({ name: `Pet ${i}`, categoryId: 1, status: 'available' })

      await buildTestApp(t, { store, databaseUrl: stores.databaseUrl, env: { ...ENV, WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '2000' } })
      await eventually(async () => (await stores.webhooks.listWebhookEndpoints()).find((endpoint) => endpoint.id === id)?.waiting === 0, 'every delivery is made', 30_000)

      const attempts = await execSql(stores.databaseUrl, 'SELECT attempt, error FROM webhook_attempts ORDER BY event_id, attempt')
      assert.deepEqual(attempts.filter((attempt) => attempt.error !== null), [], 'attempts that failed (a request sent beyond the bound waits in the pool and spends its time limit there)')
      assert.equal(attempts.length, 10, 'each delivered at its first attempt')
      assert.equal(receiver.maxInFlight, 2)
    })

    test('When two endpoints on one host have deliveries due, then each has its own WEBHOOK_ENDPOINT_CONCURRENCY connections, and neither\'s requests wait for the other\'s and time out', async (t) => {
      const receiver = await webhookReceiver(t)
      // answered within the time limit, but not twice over: a request that waited for another endpoint's connection would time out
      receiver.answer(() => ({ status: 204, afterMs: 600 }))
      const stores = await openStores(t, store)
      for (const path of ['a', 'b']) {
        await stores.webhooks.createWebhookEndpoint({ name: path, url: `${receiver.url}/${path}`, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      }
      for (let i = 0; i < 6; i++) await stores.pets.createPet({ name: `Pet ${i}`, categoryId: 1, status: 'available' })

      await buildTestApp(t, { store, databaseUrl: stores.databaseUrl, env: { ...ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '1000' } })
      await eventually(async () => (await stores.webhooks.listWebhookEndpoints()).every((endpoint) => endpoint.waiting === 0), 'every delivery is made', 30_000)

      const attempts = await execSql(stores.databaseUrl, 'SELECT endpoint_id, event_id, attempt, error FROM webhook_attempts ORDER BY endpoint_id, event_id, attempt')
      assert.deepEqual(attempts.filter((attempt) => attempt.error !== null), [], 'attempts that failed')
      assert.equal(attempts.length, 12, 'each delivered at its first attempt')
      assert.equal(receiver.maxInFlight, 4, 'both endpoints served at once, two requests each')
    })

    test('When more requests than WEBHOOK_ENDPOINT_CONCURRENCY go to one endpoint at once, then the sender holds the rest until one of its connections is free, and the time they wait counts against their WEBHOOK_TIMEOUT_MS', async (t) => {
      const receiver = await webhookReceiver(t)
      receiver.answer(() => ({ status: 204, afterMs: 600 }))
      const sender = new WebhookSender(loadConfig({ ...ENV, WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '1000' }).webhooks)
      t.after(async () => { await sender.close() })
      const at = new Date()
      const send = async (url: string, id: number): Promise<string> => {
        const sent = await sender.post({ url, id: String(id), body: JSON.stringify({ id, type: 'pet.created', occurredAt: at.toISOString(), data: {} }), secrets: [generateWebhookSecret()] }, at, new AbortController().signal)
        return sent.delivered ? 'delivered' : sent.error
      }

      // four to one endpoint, and beside them two to another endpoint on the same host
      const [crowded, beside] = await Promise.all([Promise.all([1, 2, 3, 4].map(async (id) => await send(`${receiver.url}/a`, id))),
        Promise.all([1, 2].map(async (id) => await send(`${receiver.url}/b`, id)))])

      assert.equal(receiver.maxInFlight, 4, 'the most requests the receiver held at once: two for each endpoint')
      // two answered at 600 ms; the two that waited for a connection would be answered at 1200 ms, past the 1000 ms limit
      assert.deepEqual(crowded, ['delivered', 'delivered', 'timed out', 'timed out'])
      assert.deepEqual(beside, ['delivered', 'delivered'], 'the other endpoint on the host has connections of its own')
    })
  })
}
