import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { createWebhookDeliveryLog } from '../../src/capabilities/webhooks/store/create-webhook-delivery-log.js'
import type { WebhookDeliveryLog } from '../../src/capabilities/webhooks/store/webhook-delivery-log.js'
import type { ClaimedWebhookEndpoint, WebhookAttemptOutcome, WebhookStore } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { testStores, type StoreKind } from '../helpers/databases.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'

const LEASE_MS = 30_000
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

interface Opened extends OpenedStores { log: WebhookDeliveryLog }

async function openFresh (t: TestContext, kind: StoreKind): Promise<Opened> {
  const stores = await openStores(t, kind)
  return { ...stores, log: createWebhookDeliveryLog(stores.database) }
}

async function addEndpoint (webhooks: WebhookStore, eventTypes = ['pet.created']): Promise<number> {
  return (await webhooks.createWebhookEndpoint({ name: 'hook', url: 'https://hooks.example.com/petstore', eventTypes, secret: SECRET }, new Date())).id
}

async function createPets ({ pets, events }: Opened, count: number): Promise<number[]> {
  for (let i = 0; i < count; i++) await pets.createPet({ name: `pet ${i}`, categoryId: 1, status: 'available' })
  return (await events.listEvents({ afterId: 0, limit: 1000 })).events.slice(-count).map(({ id }) => id)
}

const at = (ms: number): Date => new Date(Date.UTC(2026, 10, 25, 9, 0, 0) + ms)
const failed = (when: Date, retryAt: Date | undefined): WebhookAttemptOutcome => ({ startedAt: when, durationMs: 5, status: 500, delivered: false, error: 'answered 500', retryAt, disable: false })
const delivered = (when: Date): WebhookAttemptOutcome => ({ startedAt: when, durationMs: 5, status: 204, delivered: true })

/** One turn at `now`: claims, schedules and attempts every due delivery, each as `outcome` says, then gives the lease back. */
async function turn (webhooks: WebhookStore, now: Date, outcome: (eventId: number) => WebhookAttemptOutcome): Promise<number[]> {
  const claimed: ClaimedWebhookEndpoint | undefined = await webhooks.claimWebhookEndpoint(now, LEASE_MS, `token-${now.getTime()}`, true)
  if (claimed === undefined) return []
  await webhooks.scheduleWebhookDeliveries(claimed, 1000)
  const due = await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 1000)
  await webhooks.recordWebhookAttempts(claimed, due.map(({ eventId }) => ({ eventId, outcome: outcome(eventId) })), now)
  await webhooks.releaseWebhookEndpoint(claimed, now)
  return due.map(({ eventId }) => eventId)
}

// Resends, recoveries and the pages of attempts, as every WebhookDeliveryLog promises them, whatever its engine
for (const kind of testStores()) {
  describe(`WebhookDeliveryLog redelivery contract (${kind})`, () => {
    test('When an event is resent, then it is due at once whether it was delivered, waiting or given up, its attempts numbered on; refused for a disabled endpoint, an unknown event and a type not received', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      const [deliveredId = 0, givenUpId = 0] = await createPets(opened, 2)
      await turn(webhooks, at(0), (eventId) => eventId === deliveredId ? delivered(at(0)) : failed(at(0), undefined))
      await opened.orders.placeOrder(1, {})
      const orderEvent = (await opened.events.listEvents({ afterId: givenUpId, limit: 10 })).events.find(({ type }) => type === 'order.created')

      const again = await log.resendWebhookEvent(id, deliveredId)
      const retried = await log.resendWebhookEvent(id, givenUpId)
      const due = await turn(webhooks, at(1_000), () => delivered(at(1_000)))
      const attempts = await log.listWebhookAttempts(id, { limit: 10 })
      await webhooks.updateWebhookEndpoint(id, { enabled: false }, at(2_000))

      assert.deepEqual([again, retried], [{ outcome: 'queued', attempt: 2 }, { outcome: 'queued', attempt: 2 }])
      assert.deepEqual(due, [deliveredId, givenUpId], 'both due at once, in event-id order')
      assert.deepEqual(attempts?.slice(0, 2).map(({ eventId, attempt, result }) => [eventId, attempt, result]), [[givenUpId, 2, 'delivered'], [deliveredId, 2, 'delivered']])
      assert.deepEqual(await log.resendWebhookEvent(id, deliveredId), { outcome: 'endpoint_disabled' })
      await webhooks.updateWebhookEndpoint(id, { enabled: true }, at(3_000))
      assert.deepEqual(await log.resendWebhookEvent(id, 10_000), { outcome: 'event_not_found' })
      assert.deepEqual(await log.resendWebhookEvent(id, orderEvent?.id ?? 0), { outcome: 'type_not_received', type: 'order.created', received: ['pet.created'] })
      assert.deepEqual(await log.resendWebhookEvent(id + 1, deliveredId), { outcome: 'endpoint_not_found' })
    })

    test('When an event is resent before the endpoint scheduled it, then nothing is added: its turn sends it once', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      const [eventId = 0] = await createPets(opened, 1)

      const resent = await log.resendWebhookEvent(id, eventId)
      const sent = await turn(webhooks, at(0), () => delivered(at(0)))

      assert.deepEqual(resent, { outcome: 'waiting' })
      assert.deepEqual(sent, [eventId])
      assert.deepEqual(await turn(webhooks, at(1), () => delivered(at(1))), [])
    })

    test('When deliveries are recovered, then those that failed in the window and were not delivered since are due at once, retrying or given up; once, however often it is asked', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      const [early = 0, retrying = 0, givenUp = 0, recovered = 0] = await createPets(opened, 4)
      // early fails before the window; the others fail in it; `recovered` is delivered afterwards
      await turn(webhooks, at(0), (eventId) => failed(at(eventId === early ? 0 : 10_000), eventId === retrying ? at(3_600_000) : undefined))
      await log.resendWebhookEvent(id, recovered)
      await turn(webhooks, at(20_000), () => delivered(at(20_000)))

      const result = await log.recoverWebhookDeliveries(id, at(5_000), at(30_000))
      const repeated = await log.recoverWebhookDeliveries(id, at(5_000), at(30_000))
      const sent = await turn(webhooks, at(40_000), () => delivered(at(40_000)))
      const afterDelivery = await log.recoverWebhookDeliveries(id, at(5_000), at(30_000))

      assert.deepEqual(result, { outcome: 'queued', queued: 2, firstEventId: retrying, lastEventId: givenUp })
      assert.deepEqual(repeated, result, 'asked again before they were sent: the same two, queued once')
      assert.deepEqual(sent, [retrying, givenUp], 'the early failure is outside the window; the delivered one is not sent again')
      assert.deepEqual(afterDelivery, { outcome: 'queued', queued: 0, firstEventId: null, lastEventId: null })
      assert.deepEqual((await log.listWebhookAttempts(id, { limit: 1 }))?.map(({ attempt }) => attempt), [2], 'the attempts are numbered on')
    })

    test('When a recovery is asked of a disabled or unknown endpoint, then it is refused and nothing changes', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      await createPets(opened, 1)
      await turn(webhooks, at(0), () => failed(at(0), undefined))
      await webhooks.updateWebhookEndpoint(id, { enabled: false }, at(1_000))

      assert.deepEqual(await log.recoverWebhookDeliveries(id, at(-1_000), at(1_000)), { outcome: 'endpoint_disabled' })
      assert.deepEqual(await log.recoverWebhookDeliveries(id + 1, at(-1_000), at(1_000)), { outcome: 'endpoint_not_found' })
      assert.equal((await webhooks.findWebhookEndpoint(id))?.failed, 1)
    })

    test('When attempts are listed a page at a time, then each page holds those before the last one served, newest first, filtered by result', async (t) => {
      const opened = await openFresh(t, kind)
      const { webhooks, log } = opened
      const id = await addEndpoint(webhooks)
      const events = await createPets(opened, 3)
      await turn(webhooks, at(0), (eventId) => eventId === events[1] ? delivered(at(0)) : failed(at(0), at(1_000)))
      await turn(webhooks, at(1_000), () => delivered(at(1_000)))

      const all = await log.listWebhookAttempts(id, { limit: 10 }) ?? []
      const first = await log.listWebhookAttempts(id, { limit: 2 }) ?? []
      const rest = await log.listWebhookAttempts(id, { limit: 10, beforeId: first.at(-1)?.id ?? 0 }) ?? []
      const succeeded = await log.listWebhookAttempts(id, { limit: 10, result: 'succeeded' }) ?? []
      const failedOnes = await log.listWebhookAttempts(id, { limit: 10, result: 'failed' }) ?? []

      assert.equal(all.length, 5)
      assert.deepEqual([...first, ...rest].map(({ id: attemptId }) => attemptId), all.map(({ id: attemptId }) => attemptId))
      assert.deepEqual(all.map(({ id: attemptId }) => attemptId), [...all].map(({ id: attemptId }) => attemptId).sort((a, b) => b - a), 'newest first')
      assert.ok(succeeded.length === 3 && succeeded.every(({ result }) => result === 'delivered'))
      assert.ok(failedOnes.length === 2 && failedOnes.every(({ result }) => result !== 'delivered'))
    })
  })
}
