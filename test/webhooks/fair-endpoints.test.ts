import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import type { ClaimedWebhookEndpoint } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { TURN_DELIVERIES } from '../../src/capabilities/webhooks/webhook-dispatcher.js'
import type { Clock } from '../../src/infra/runtime/clock.js'
import { buildTestApp, createdPet, testStores, type StoreKind } from '../helpers/build-app.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'
import { webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  RATE_LIMIT_MAX: '0'
}
const ENDPOINTS = 12
// each receiver takes this long an answer and gets one request at a time: about 10 deliveries a second, so
// an endpoint's turn ends at the turn's time limit (TURN_MS, 1 s) with most of its backlog still due
const ANSWER_MS = 100
// recorded before the app starts: as many as one claim schedules, so a turn without a limit would take
// them all, 100 answers of ANSWER_MS: 10 s
const BACKLOG = 100
const CREATE_EVERY_MS = 50
// with the limit, 12 endpoints over 2 slots are all served within 6 turns of about 1 s per slot (about
// 7 s here, so this leaves a loaded machine four times that); without it, the last two wait behind five
// turns of 10 s on each slot, 50 s
const ALL_SERVED_WITHIN_MS = 30_000
// due to each endpoint at once: two full turns and part of a third
const DUE = 2 * TURN_DELIVERIES + 10

/**
 * A store with an endpoint to each receiver (ids in the receivers' order) and `events` pets created after
 * them, each a `pet.created` event for every endpoint, before any app runs on it: no dispatcher has
 * delivered any of them.
 */
async function endpointsWithBacklog (t: TestContext, store: StoreKind, receivers: readonly WebhookReceiver[], events: number): Promise<OpenedStores> {
  const stores = await openStores(t, store)
  for (const [i, receiver] of receivers.entries()) {
    await stores.webhooks.createWebhookEndpoint({ name: `receiver-${i}`, url: receiver.url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
  }
  for (let i = 0; i < events; i++) await stores.pets.createPet({ name: `Pet ${i}`, categoryId: 1, status: 'available' })
  return stores
}

// how far each read of a slowed clock moves it at least: a turn of TURN_DELIVERIES reads it about 500 times
const READ_STEP_MS = 0.01

/**
 * The real time, running `factor` times slower from now on, and each read READ_STEP_MS past the last at least:
 * slowed alone, a hundred real milliseconds are one, and two endpoints given back within them would share their
 * last-served time (the claim then goes by id, not by which was served longest ago); with the step, a whole turn
 * between two give-backs (about 5 ms) sets them apart, and a turn still ends far from its time limit.
 */
function slowedClock (factor: number): Clock {
  const start = Date.now()
  let last = start
  return {
    now: () => {
      last = Math.max(last + READ_STEP_MS, start + (Date.now() - start) / factor)
      return Math.floor(last)
    }
  }
}

/** `endpoints` (each request's endpoint, in order of arrival) as runs of consecutive requests to one endpoint. */
function runsOf (endpoints: readonly number[]): Array<{ endpoint: number, length: number }> {
  const runs: Array<{ endpoint: number, length: number }> = []
  for (const endpoint of endpoints) {
    const last = runs.at(-1)
    if (last?.endpoint === endpoint) last.length++
    else runs.push({ endpoint, length: 1 })
  }
  return runs
}

/** The runs for a message: `2×100` is a hundred requests in a row to endpoint 2. */
function describeRuns (endpoints: readonly number[]): string {
  return runsOf(endpoints).map(({ endpoint, length }) => `${endpoint}×${length}`).join(' ')
}

for (const store of testStores()) {
  describe(`webhook endpoints served in turn (${store})`, () => {
    test('When more endpoints than WEBHOOK_CONCURRENCY always have work, then every one is served while the events keep coming', async (t) => {
      const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, async () => await webhookReceiver(t)))
      for (const receiver of receivers) receiver.answer(() => ({ status: 204, afterMs: ANSWER_MS }))
      const { databaseUrl } = await endpointsWithBacklog(t, store, receivers, BACKLOG)
      const api = await buildTestApp(t, { store, databaseUrl, env: { ...ENV, WEBHOOK_CONCURRENCY: '2', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } })

      const deadline = Date.now() + ALL_SERVED_WITHIN_MS
      for (let i = 0; receivers.some((receiver) => receiver.received.length === 0); i++) {
        assert.ok(Date.now() < deadline, `not every endpoint was served within ${ALL_SERVED_WITHIN_MS} ms while events kept coming: ${receivers.map((receiver) => receiver.received.length).join(', ')}`)
        await createdPet(api, { name: `Pet ${BACKLOG + i}`, categoryId: 1 })
        await delay(CREATE_EVERY_MS)
      }
      // the premise: each endpoint is still within its backlog (sent in event-id order), so every turn ended at its limit, never for want of work
      const served = receivers.map((receiver) => receiver.received.length)
      assert.ok(served.every((count) => count < BACKLOG), `an endpoint got through its backlog: ${served.join(', ')}`)
    })

    test('When endpoints have more deliveries due than a turn takes, then a turn ends after TURN_DELIVERIES and the endpoint served longest ago goes next', async (t) => {
      const receivers = await Promise.all([0, 1, 2].map(async () => await webhookReceiver(t)))
      // each request's endpoint, in order of arrival
      const arrivals: number[] = []
      for (const [i, receiver] of receivers.entries()) receiver.answer(() => { arrivals.push(i); return 204 })
      const stores = await endpointsWithBacklog(t, store, receivers, DUE)
      // every delivery already due, as turns cut short by their time limit leave them: a claim schedules at most
      // 100 events, so without these only the time limit (which this test takes out, below) could end a turn early.
      // All leased at once, so that each claim takes another endpoint; then given back in the reverse of their
      // ids' order, so that the last one was served longest ago
      const claims: ClaimedWebhookEndpoint[] = []
      for (let i = 0; i < receivers.length; i++) {
        const claim = await stores.webhooks.claimWebhookEndpoint(new Date(), 60_000, randomBytes(12).toString('base64url'), true)
        assert.ok(claim !== undefined)
        claims.push(claim)
      }
      const servedAt = Date.now() - 1_000
      for (const [i, claim] of claims.sort((a, b) => a.id - b.id).entries()) {
        assert.equal(await stores.webhooks.scheduleWebhookDeliveries(claim, DUE), DUE)
        await stores.webhooks.releaseWebhookEndpoint(claim, new Date(servedAt - i))
      }
      // the app's clock runs a hundred times slower: its turns' 1 s is 100 s here, so only the count ends them.
      // One slot, one request in flight: turns one after another, each endpoint's requests in event-id order
      await buildTestApp(t, { store, databaseUrl: stores.databaseUrl, clock: slowedClock(100), env: { ...ENV, WEBHOOK_CONCURRENCY: '1', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } })
      await Promise.all(receivers.map(async (receiver) => await receiver.waitFor(DUE, 60_000)))

      // where each endpoint's turns began: its first request, its 101st, its 201st (counted, so that an attempt
      // slow enough to give up the slot, and let another endpoint's turn begin beside it, changes nothing)
      const turns = receivers.flatMap((_, endpoint) => arrivals.flatMap((to, at) => to === endpoint ? [at] : [])
        .filter((_at, nth) => nth % TURN_DELIVERIES === 0).map((at) => ({ at, endpoint })))
      const roundRobin = Array.from({ length: Math.ceil(DUE / TURN_DELIVERIES) }, () => receivers.map((_, endpoint) => endpoint).reverse()).flat()
      assert.deepEqual(turns.sort((a, b) => a.at - b.at).map(({ endpoint }) => endpoint), roundRobin, `turns not taken in order, longest ago first: ${describeRuns(arrivals)}`)
      const longest = Math.max(...runsOf(arrivals).map(({ length }) => length))
      assert.ok(longest <= TURN_DELIVERIES, `an endpoint got ${longest} requests in a row: ${describeRuns(arrivals)}`)
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
      // held long enough that the requests of one refill are all in flight together
      receiver.answer(() => ({ status: 204, afterMs: 1_000 }))
      // all recorded before the app starts: its first turn finds three times the bound due
      const { databaseUrl } = await endpointsWithBacklog(t, store, [receiver], 12)
      await buildTestApp(t, { store, databaseUrl, env: { ...ENV, WEBHOOK_ENDPOINT_CONCURRENCY: '4' } })
      const requests = await receiver.waitFor(12)
      // the sender's connections to an endpoint are capped by the same setting: past the dispatcher's bound alone,
      // a request would wait for a connection rather than reach the receiver
      assert.equal(receiver.maxInFlight, 4, 'the most requests the endpoint held at once: the bound, reached and never passed')
      assert.deepEqual(requests.map((request) => request.headers['webhook-id']).sort(), [...new Set(requests.map((request) => request.headers['webhook-id']))].sort(), 'each event once')
    })
  })
}
