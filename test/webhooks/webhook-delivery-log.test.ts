import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, test, type TestContext } from 'node:test'
import { createWebhookDeliveryLog } from '../../src/capabilities/webhooks/store/create-webhook-delivery-log.js'
import type { WebhookDeliveryLog } from '../../src/capabilities/webhooks/store/webhook-delivery-log.js'
import type { ClaimedWebhookEndpoint, WebhookAttemptOutcome, WebhookStore } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { execSql, testStores, type StoreKind } from '../helpers/databases.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'

const LEASE_MS = 30_000
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const NEWER_SECRET = 'whsec_ZmFrZWZha2VmYWtlZmFrZWZha2VmYWtlZmFrZWZha2U='

interface Opened extends OpenedStores { log: WebhookDeliveryLog }

async function openFresh (t: TestContext, kind: StoreKind): Promise<Opened> {
  const stores = await openStores(t, kind)
  return { ...stores, log: createWebhookDeliveryLog(stores.database) }
}

async function addEndpoint (webhooks: WebhookStore, url = 'https://hooks.example.com/petstore'): Promise<number> {
  return (await webhooks.createWebhookEndpoint({ name: 'orders', url, eventTypes: ['pet.created'], secret: SECRET }, new Date())).id
}

async function createPets ({ pets }: Opened, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await pets.createPet({ name: `pet ${i}`, categoryId: 1, status: 'available' })
}

const later = (from: Date, ms: number): Date => new Date(from.getTime() + ms)

/** Claims the endpoint with work at `now` and schedules its deliveries (fails when none has work). */
async function claim (webhooks: WebhookStore, now: Date): Promise<ClaimedWebhookEndpoint> {
  const claimed = await webhooks.claimWebhookEndpoint(now, LEASE_MS, `token-${now.getTime()}`, true)
  assert.ok(claimed !== undefined, 'no endpoint was claimed')
  await webhooks.scheduleWebhookDeliveries(claimed, 100)
  return claimed
}

/** Records one attempt of each due delivery at `now`, in event-id order, as `outcome` says; returns their event ids. */
async function attemptAll (webhooks: WebhookStore, claimed: ClaimedWebhookEndpoint, now: Date, outcome: (eventId: number, index: number) => WebhookAttemptOutcome): Promise<number[]> {
  const due = await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 100)
  await webhooks.recordWebhookAttempts(claimed, due.map(({ eventId }, index) => ({ eventId, outcome: outcome(eventId, index) })), now)
  return due.map(({ eventId }) => eventId)
}

const sent = (now: Date, status: number | undefined): { startedAt: Date, durationMs: number, status: number | undefined } => ({ startedAt: later(now, -5), durationMs: 5, status })

// What every WebhookDeliveryLog promises, whatever its engine
for (const kind of testStores()) {
  describe(`WebhookDeliveryLog contract (${kind})`, () => {
    test('When attempts are recorded, then the log lists each, newest first, with its event, number, time, answer and next attempt; --failed and --limit narrow it', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      const quiet = await addEndpoint(webhooks, 'https://quiet.example.com/hooks')
      await createPets(opened, 2)
      const now = new Date()
      const claimed = await claim(webhooks, now)

      const [first, second] = await attemptAll(webhooks, claimed, now, (_eventId, index) => ({
        ...sent(now, 503), delivered: false, error: 'answered 503', retryAt: later(now, index === 0 ? 2_000 : 3_000), disable: false
      }))
      await attemptAll(webhooks, claimed, later(now, 3_000), (eventId) => eventId === first
        ? { ...sent(later(now, 3_000), 204), delivered: true }
        : { ...sent(later(now, 3_000), undefined), delivered: false, error: 'timed out', retryAt: undefined, disable: false })

      const all = await log.listWebhookAttempts(id, { limit: 10 })
      assert.deepEqual(all?.map(({ eventId, eventType, attempt, attemptedAt, durationMs, result, status, error, nextAttemptAt }) =>
        [eventId, eventType, attempt, attemptedAt, durationMs, result, status, error, nextAttemptAt]), [
        [second, 'pet.created', 2, later(now, 2_995).toISOString(), 5, 'failed', null, 'timed out', null],
        [first, 'pet.created', 2, later(now, 2_995).toISOString(), 5, 'delivered', 204, null, null],
        [second, 'pet.created', 1, later(now, -5).toISOString(), 5, 'retrying', 503, 'answered 503', later(now, 3_000).toISOString()],
        [first, 'pet.created', 1, later(now, -5).toISOString(), 5, 'retrying', 503, 'answered 503', later(now, 2_000).toISOString()]
      ])
      assert.deepEqual((await log.listWebhookAttempts(id, { result: 'failed', limit: 10 }))?.map(({ eventId, attempt }) => [eventId, attempt]),
        [[second, 2], [second, 1], [first, 1]])
      assert.deepEqual((await log.listWebhookAttempts(id, { limit: 1 }))?.map(({ eventId, attempt }) => [eventId, attempt]), [[second, 2]])
      assert.deepEqual(await log.listWebhookAttempts(quiet, { limit: 10 }), [], 'an endpoint without attempts')
      assert.equal(await log.listWebhookAttempts(quiet + 1, { limit: 10 }), undefined, 'an unknown endpoint')
    })

    test('When a lease was taken over, then the former holder\'s attempts are not logged', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      await createPets(opened, 1)
      const now = new Date()
      const stale = await claim(webhooks, now)
      const due = await webhooks.nextDueWebhookDeliveries(stale, now, LEASE_MS, 1)
      await claim(webhooks, later(now, LEASE_MS))

      await webhooks.recordWebhookAttempts(stale, due.map(({ eventId }) => ({ eventId, outcome: { ...sent(now, 204), delivered: true } })), later(now, LEASE_MS))

      assert.deepEqual(await log.listWebhookAttempts(id, { limit: 10 }), [])
    })

    test('When given-up deliveries are retried, then each whose event is retained is due at once, oldest first, with the whole schedule again; those whose event is gone stay given up', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log, events } = opened
      const id = await addEndpoint(webhooks)
      await createPets(opened, 1)
      await sleep(5)
      const between = new Date()
      await sleep(5)
      await createPets(opened, 2)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      const [expired, ...retained] = await attemptAll(webhooks, claimed, now, () => ({ ...sent(now, 500), delivered: false, error: 'answered 500', retryAt: undefined, disable: false }))
      await webhooks.releaseWebhookEndpoint(claimed, now)
      await events.purgeEventsBefore(between, 100)

      const retried = await log.requeueGivenUpWebhookDeliveries(id)
      const again = await log.requeueGivenUpWebhookDeliveries(id)

      assert.deepEqual(retried, { requeued: 2, expired: 1, disabled: false })
      assert.deepEqual(again, { requeued: 0, expired: 1, disabled: false })
      const reclaimed = await claim(webhooks, later(now, 1))
      const due = await webhooks.nextDueWebhookDeliveries(reclaimed, later(now, 1), LEASE_MS, 100)
      assert.deepEqual(due.map(({ eventId, attempts }) => [eventId, attempts]), retained.map((eventId) => [eventId, 0]))
      const [listed] = await webhooks.listWebhookEndpoints()
      assert.deepEqual({ waiting: listed?.waiting, failed: listed?.failed }, { waiting: 2, failed: 1 })
      assert.ok(expired !== undefined)
      assert.equal(await log.requeueGivenUpWebhookDeliveries(id + 1), undefined, 'an unknown endpoint')
    })

    test('When retention deletes events, then their attempts go with them; when an endpoint is removed, then all of its attempts go', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log, events, databaseUrl } = opened
      const id = await addEndpoint(webhooks)
      await createPets(opened, 1)
      await sleep(5)
      const between = new Date()
      await sleep(5)
      await createPets(opened, 1)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      const [, kept] = await attemptAll(webhooks, claimed, now, () => ({ ...sent(now, 204), delivered: true }))

      await events.purgeEventsBefore(between, 100)
      const afterRetention = await log.listWebhookAttempts(id, { limit: 10 })
      await webhooks.removeWebhookEndpoint(id)
      const left = await execSql(databaseUrl, 'SELECT count(*) AS n FROM webhook_attempts')

      assert.deepEqual(afterRetention?.map(({ eventId }) => eventId), [kept])
      assert.equal(Number(left[0]?.n), 0)
    })

    test('When a test message is prepared, then the target has the endpoint\'s URL, every secret that signs now, and whether it is disabled', async (t) => {
      const { webhooks, log } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      const now = new Date()
      await webhooks.rotateWebhookSecret(id, NEWER_SECRET, later(now, 60_000), now)

      assert.deepEqual(await log.findWebhookTestTarget(id, later(now, 59_999)), { url: 'https://hooks.example.com/petstore', secrets: [NEWER_SECRET, SECRET], disabled: false })
      assert.deepEqual(await log.findWebhookTestTarget(id, later(now, 60_000)), { url: 'https://hooks.example.com/petstore', secrets: [NEWER_SECRET], disabled: false })
      assert.equal(await log.findWebhookTestTarget(id + 1, now), undefined)
    })
  })
}
