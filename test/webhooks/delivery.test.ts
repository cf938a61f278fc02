import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { WEBHOOK_USER_AGENT } from '../../src/capabilities/webhooks/webhook-policy.js'
import { buildTestApp, createdPet, patchPet, testStores, type TestApp } from '../helpers/build-app.js'
import { type Event, type EventType, followFeed } from '../helpers/events.js'
import { endpointState, eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'

// a real receiver on 127.0.0.1, so the private-network and http switches are on; a short schedule
const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  // one delivery in flight an endpoint: the order checked below is what that setting promises
  WEBHOOK_ENDPOINT_CONCURRENCY: '1',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '50ms,100ms',
  WEBHOOK_TIMEOUT_MS: '1000',
  RATE_LIMIT_MAX: '0'
}

async function addEndpoint (api: TestApp, url: string, eventTypes: readonly EventType[] = ['pet.created', 'pet.updated']): Promise<{ id: number, secret: string }> {
  const secret = generateWebhookSecret()
  const endpoint = await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url, eventTypes, secret }, new Date())
  return { id: endpoint.id, secret }
}

/** Checks a request with the Standard Webhooks library, as a receiver would, and returns its event. */
function verified (secret: string, request: ReceivedWebhook): Event {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
  return new Webhook(secret).verify(request.body, headers) as Event
}

for (const store of testStores()) {
  describe(`webhook delivery (${store})`, () => {
    test('When a pet changes, then each registered endpoint gets the feed\'s event, signed as Standard Webhooks says, with the event id as webhook-id', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const before = await createdPet(api, { name: 'Before', categoryId: 1 })
      const { secret } = await addEndpoint(api, receiver.url)
      const pet = await createdPet(api, { name: 'Rex', categoryId: 2 })
      assert.equal((await patchPet(api, pet.id, { status: 'pending' })).statusCode, 200)

      const requests = await receiver.waitFor(2)
      const feed = (await followFeed(api)).events
      const events = requests.map((request) => verified(secret, request))
      assert.deepEqual(events, feed.slice(1), 'the bodies are the feed\'s events after the endpoint was added, in order')
      assert.ok(!events.some((event) => (event.data as { pet: { id: number } }).pet.id === before.id), 'an event recorded before the endpoint was added is not sent')
      for (const [i, request] of requests.entries()) {
        assert.equal(request.headers['webhook-id'], String(events[i]?.id))
        assert.equal(request.headers['content-type'], 'application/json')
        assert.equal(request.headers['user-agent'], WEBHOOK_USER_AGENT)
        assert.match(String(request.headers['webhook-timestamp']), /^\d+$/)
        assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 60)
        assert.equal(request.body, JSON.stringify(feed[i + 1]), 'the body is byte for byte the feed\'s JSON')
      }
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(receiver.received.length, 2, 'each event is delivered once')
    })

    test('When an endpoint asks for one event type, then it gets only those', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const { secret } = await addEndpoint(api, receiver.url, ['pet.updated'])
      const pet = await createdPet(api, { name: 'Rex', categoryId: 2 })
      assert.equal((await patchPet(api, pet.id, { name: 'Max' })).statusCode, 200)
      const [request] = await receiver.waitFor(1) as [ReceivedWebhook]
      assert.equal(verified(secret, request).type, 'pet.updated')
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(receiver.received.length, 1)
    })

    test('When the receiver fails (a 500, then no answer within the timeout), then the same event is retried with the same webhook-id until it is delivered', async (t) => {
      const receiver = await webhookReceiver(t)
      // 500 first, then no answer within the timeout, then delivered
      receiver.answer((_request, index) => index === 0 ? 500 : index === 1 ? 'blackhole' : 200)
      const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms', WEBHOOK_TIMEOUT_MS: '300' } })
      const { id, secret } = await addEndpoint(api, receiver.url)
      await createdPet(api, { name: 'Rex', categoryId: 2 })

      const requests = await receiver.waitFor(3)
      assert.deepEqual(new Set(requests.map((request) => request.headers['webhook-id'])).size, 1)
      for (const request of requests) verified(secret, request)
      await eventually(async () => (await endpointState(api, id)).waiting === 0, 'the delivery is done')
      const state = await endpointState(api, id)
      assert.equal(state.failed, 0)
      assert.ok(state.lastSuccessAt !== null && state.lastFailureAt !== null)
      assert.equal(state.lastFailure, 'timed out')
    })

    test('When nothing listens on the endpoint, then every attempt of the schedule is made and the delivery is given up, counted and shown', async (t) => {
      const receiver = await webhookReceiver(t)
      const url = receiver.url
      await receiver.close()
      const api = await buildTestApp(t, { store, env: ENV })
      const { id } = await addEndpoint(api, url)
      await createdPet(api, { name: 'Rex', categoryId: 2 })

      await eventually(async () => (await endpointState(api, id)).failed === 1, 'the delivery is given up')
      const state = await endpointState(api, id)
      assert.equal(state.waiting, 0)
      assert.equal(state.lastFailure, 'ECONNREFUSED')
      assert.equal(state.disabledAt, null)
      const metrics = await api.app.metrics.registry.getSingleMetricAsString('petstore_webhook_deliveries_total')
      assert.match(metrics, new RegExp(`petstore_webhook_deliveries_total\\{outcome="retrying",endpoint_id="${id}"\\} 2`))
      assert.match(metrics, new RegExp(`petstore_webhook_deliveries_total\\{outcome="failed",endpoint_id="${id}"\\} 1`))
    })

    test('When the secret is rotated twice, then requests carry signatures under the newest secret and both earlier ones, each verifying alone', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const { id, secret: firstSecret } = await addEndpoint(api, receiver.url)
      const secondSecret = generateWebhookSecret()
      const newSecret = generateWebhookSecret()
      const now = new Date()
      assert.ok(await api.app.webhookStore.rotateWebhookSecret(id, secondSecret, new Date(now.getTime() + 3_600_000), now))
      assert.ok(await api.app.webhookStore.rotateWebhookSecret(id, newSecret, new Date(now.getTime() + 3_600_000), now))
      await createdPet(api, { name: 'Rex', categoryId: 2 })

      const [request] = await receiver.waitFor(1) as [ReceivedWebhook]
      assert.equal(String(request.headers['webhook-signature']).split(' ').length, 3)
      assert.deepEqual(verified(newSecret, request), verified(firstSecret, request))
      assert.deepEqual(verified(newSecret, request), verified(secondSecret, request))
    })

    test('When a URL names a host that resolves to a loopback address and private networks are not allowed, then nothing is sent to it', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } })
      // registered as it was when its name resolved elsewhere: the check at delivery must catch it
      const { id } = await addEndpoint(api, receiver.url.replace('127.0.0.1', 'localhost'))
      const literal = await addEndpoint(api, receiver.url)
      await createdPet(api, { name: 'Rex', categoryId: 2 })

      await eventually(async () => (await endpointState(api, id)).failed === 1 && (await endpointState(api, literal.id)).failed === 1, 'both deliveries are refused')
      assert.equal(receiver.received.length, 0)
      assert.match(String((await endpointState(api, id)).lastFailure), /^refused: localhost resolves to (127\.0\.0\.1, which is in 127\.0\.0\.0\/8, Loopback|::1, which is in ::\/96, Unspecified, Loopback)/)
      assert.equal((await endpointState(api, literal.id)).lastFailure, 'refused: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)')
    })

    test('When one endpoint blackholes, then another endpoint and the API are served as usual', async (t) => {
      const dead = await webhookReceiver(t)
      dead.answer(() => 'blackhole')
      const healthy = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_TIMEOUT_MS: '10000' } })
      await addEndpoint(api, dead.url)
      await addEndpoint(api, healthy.url)

      const started = Date.now()
      for (let i = 0; i < 10; i++) await createdPet(api, { name: `Pet ${i}`, categoryId: i })
      const apiMs = Date.now() - started
      await healthy.waitFor(10, 5_000)
      assert.equal(dead.received.length, 1, 'the dead endpoint holds its first delivery; the others wait behind it')
      const ids = healthy.received.map((request) => Number(request.headers['webhook-id']))
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'a healthy endpoint gets its events in id order')
      t.diagnostic(`10 creates took ${apiMs} ms while an endpoint blackholed; the healthy one got all 10 within ${Date.now() - started} ms`)
    })
  })
}
