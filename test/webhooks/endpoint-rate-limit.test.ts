import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { testStores } from '../helpers/build-app.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'
import { buildWebhookApi, registered, type WebhookApi } from '../helpers/webhook-api.js'

// A rate per endpoint (rateLimit, deliveries per second), both sides: what it holds back, and what it leaves alone
const RATE = 5
const BURST = 15
// the receiver takes this long to answer: slow, but not slower than the rate's spacing
const ANSWER_MS = 100

/** The most requests that arrived within one second, [t, t + 1000 ms), over every window starting at an arrival. */
function mostInOneSecond (requests: readonly ReceivedWebhook[]): number {
  const times = requests.map(({ at }) => at).sort((a, b) => a - b)
  return Math.max(0, ...times.map((start) => times.filter((at) => at >= start && at < start + 1000).length))
}

/** How many deliveries to endpoint `id` the instance made, as its own metrics count them. */
async function deliveredBy (api: WebhookApi, id: number): Promise<number> {
  const metric = await api.app.metrics.registry.getSingleMetric('petstore_webhook_deliveries_total')?.get()
  return (metric?.values ?? []).filter(({ labels }) => labels.outcome === 'delivered' && labels.endpoint_id === String(id)).reduce((sum, { value }) => sum + value, 0)
}

/** Records `count` pets at once through the API: a burst of events. */
async function burst (api: WebhookApi, count: number): Promise<number> {
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: count }, async (_, i) => await api.call('POST', '/v1/pets', { name: `pet ${i}`, categoryId: 1 })))
  for (const answer of answers) assert.equal(answer.statusCode, 201)
  return performance.now() - started
}

for (const store of testStores()) {
  describe(`a rate limit per endpoint (${store})`, () => {
    test(`When a burst of ${BURST} events meets an endpoint limited to ${RATE} a second, then no second sees more than ${RATE} of them, and all arrive, in event-id order, none failed`, async (t) => {
      const api = await buildWebhookApi(t, { store })
      const receiver = await webhookReceiver(t)
      receiver.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      // the burst is recorded while the endpoint is disabled, then released at once: the receiver shares this process's event loop,
      // and requests arriving while the API answered the burst would be seen late, the next ones early
      const { id } = await registered(api, { url: receiver.url, events: ['pet.created'], rateLimit: RATE, disabled: true })
      await burst(api, BURST)

      assert.equal((await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: false })).statusCode, 200)
      const requests = await receiver.waitFor(BURST, 30_000)
      await eventually(async () => (await api.call('GET', `/v1/webhook-endpoints/${id}`)).json().health.waiting === 0, 'every delivery is recorded')
      const attempts = (await api.call('GET', `/v1/webhook-endpoints/${id}/attempts?limit=100`)).json<Array<{ eventId: number, attempt: number, result: string }>>()

      const ids = requests.map((request) => Number(request.headers['webhook-id']))
      const gaps = requests.slice(1).map((request, index) => request.at - (requests[index]?.at ?? 0))
      t.diagnostic(`${store}: ${BURST} deliveries over ${(requests.at(-1)?.at ?? 0) - (requests[0]?.at ?? 0)} ms, gaps ${gaps.join(' ')} ms`)
      assert.ok(mostInOneSecond(requests) <= RATE, `${mostInOneSecond(requests)} deliveries arrived within one second, more than the ${RATE} asked for`)
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'not in event-id order')
      assert.equal(new Set(ids).size, BURST)
      assert.deepEqual(attempts.map(({ attempt, result }) => [attempt, result]), Array(BURST).fill([1, 'delivered']), 'a delivery held back by the rate was failed or retried')
    })

    test(`When the instance delivering a burst to an endpoint limited to ${RATE} a second stops midway and another on its database goes on, then no second sees more than ${RATE} of them, and each arrives once, in event-id order`, async (t) => {
      // the other looks for work often, so it takes the lease as soon as the one stopped lets it
      const env = { WEBHOOK_POLL_INTERVAL_MS: '20' }
      const a = await buildWebhookApi(t, { store, env })
      const b = await buildWebhookApi(t, { store, databaseUrl: a.databaseUrl, withKey: false, env })
      const receiver = await webhookReceiver(t)
      receiver.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      const { id } = await registered(a, { url: receiver.url, events: ['pet.created'], rateLimit: RATE, disabled: true })
      await burst(a, 2 * BURST)

      assert.equal((await a.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: false })).statusCode, 200)
      // the one that took the endpoint stops midway, giving the lease back until its next send's time: the other goes on from there
      await receiver.waitFor(BURST / 2, 30_000)
      const first = await deliveredBy(a, id) > 0 ? a : b
      await first.app.close()
      const requests = await receiver.waitFor(2 * BURST, 60_000)
      const byInstance = await Promise.all([a, b].map(async (api) => await deliveredBy(api, id)))

      const ids = requests.map((request) => Number(request.headers['webhook-id']))
      const gaps = requests.slice(1).map((request, index) => request.at - (requests[index]?.at ?? 0))
      t.diagnostic(`${store}: ${2 * BURST} deliveries over ${(requests.at(-1)?.at ?? 0) - (requests[0]?.at ?? 0)} ms, ${byInstance.join(' and ')} by the two instances, gaps ${gaps.join(' ')} ms`)
      assert.ok(mostInOneSecond(requests) <= RATE, `${mostInOneSecond(requests)} deliveries arrived within one second, more than the ${RATE} asked for`)
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'not in event-id order')
      assert.equal(new Set(ids).size, 2 * BURST)
      assert.ok(byInstance.every((count) => count > 0), `the deliveries were not shared: ${byInstance.join(' and ')}`)
    })

    test('When one endpoint is rate-limited, then another endpoint gets the same burst as fast as it answers, and the API answers the burst as fast as without any endpoint', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const limited = await webhookReceiver(t)
      const free = await webhookReceiver(t)
      limited.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      free.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      const baseline = await burst(api, BURST)
      await registered(api, { url: limited.url, events: ['pet.created'], rateLimit: 1 })
      await registered(api, { url: free.url, events: ['pet.created'] })

      const started = Date.now()
      const answered = await burst(api, BURST)
      await free.waitFor(BURST, 10_000)
      const freeDone = Date.now() - started

      t.diagnostic(`${store}: the burst answered in ${Math.round(answered)} ms (${Math.round(baseline)} ms without endpoints); the unlimited endpoint had it all after ${freeDone} ms, the limited one ${limited.received.length}`)
      assert.ok(freeDone < 3_000, `the unlimited endpoint took ${freeDone} ms for the burst`)
      assert.ok(limited.received.length <= 1 + Math.ceil(freeDone / 1000), `the limited endpoint got ${limited.received.length} in ${freeDone} ms`)
      assert.ok(answered < Math.max(1_000, baseline * 4), `the API took ${Math.round(answered)} ms for the burst (${Math.round(baseline)} ms without endpoints)`)
    })
  })
}
