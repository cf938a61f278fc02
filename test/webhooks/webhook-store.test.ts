import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import type { EventType } from '../helpers/events.js'
import type { EventStore } from '../../src/capabilities/events/store/event-store.js'
import { openStores } from '../helpers/stores.js'
import type { PetStore } from '../../src/capabilities/pets/store/pet-store.js'
import type { ClaimedWebhookEndpoint, WebhookStore } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { execSql, testStores, type StoreKind } from '../helpers/databases.js'

const LEASE_MS = 30_000
// when an attempt was sent, how long it took, what the receiver answered: only the delivery log reads them
const SENT = { startedAt: new Date(), durationMs: 5, status: undefined }
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

interface Opened { store: PetStore, events: EventStore, webhooks: WebhookStore, databaseUrl: string }

/** A migrated store on a fresh database, closed when the test ends. */
async function openFresh (t: TestContext, kind: StoreKind): Promise<Opened> {
  const { pets: store, events, webhooks, databaseUrl } = await openStores(t, kind)
  return { store, events, webhooks, databaseUrl }
}

async function addEndpoint (webhooks: WebhookStore, eventTypes: EventType[] = ['pet.created', 'pet.updated'], now = new Date()): Promise<number> {
  return (await webhooks.createWebhookEndpoint({ name: 'orders', url: 'https://hooks.example.com/petstore', eventTypes, secret: SECRET }, now)).id
}

async function createPet (store: PetStore, name = 'Rex'): Promise<number> {
  return (await store.createPet({ name, categoryId: 1, status: 'available' })).id
}

/** A claim that must succeed: the endpoint has work and nobody holds it. */
async function claim (webhooks: WebhookStore, now: Date, token = 'token-a'): Promise<ClaimedWebhookEndpoint> {
  const claimed = await webhooks.claimWebhookEndpoint(now, LEASE_MS, token, true)
  assert.ok(claimed !== undefined, 'no endpoint was claimed')
  return claimed
}

/** Delivers every due delivery of the claim at `now`, in the order they come; returns their event ids. */
async function deliverAll (webhooks: WebhookStore, claimed: ClaimedWebhookEndpoint, now: Date): Promise<number[]> {
  const delivered: number[] = []
  for (;;) {
    const due = (await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 1))[0]
    if (due === undefined) return delivered
    delivered.push(due.eventId)
    await webhooks.recordWebhookAttempts(claimed, [{ eventId: due.eventId, outcome: { ...SENT, delivered: true } }], now)
  }
}

async function eventIds (events: EventStore): Promise<number[]> {
  return (await events.listEvents({ afterId: 0, limit: 100 })).events.map((event) => event.id)
}

const later = (from: Date, ms: number): Date => new Date(from.getTime() + ms)

// What every WebhookStore promises, whatever its engine
for (const kind of testStores()) {
  describe(`WebhookStore contract (${kind})`, () => {
    test('When an endpoint is added, then only the events recorded after it are delivered, in id order', async (t) => {
      const { store, events, webhooks } = await openFresh(t, kind)
      await createPet(store, 'before')
      await addEndpoint(webhooks)
      const petId = await createPet(store, 'after')
      await store.updatePet(petId, { status: 'sold' })
      const now = new Date()

      const claimed = await claim(webhooks, now)
      const scheduled = await webhooks.scheduleWebhookDeliveries(claimed, 100)
      const first = (await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 1))[0]

      assert.equal(scheduled, 2)
      assert.equal(first?.attempts, 0)
      assert.deepEqual(first?.event, (await events.listEvents({ afterId: 0, limit: 100 })).events[1])
      assert.deepEqual(await deliverAll(webhooks, claimed, now), (await eventIds(events)).slice(1))
    })

    test('When the schedule is limited, then it resumes after the last event it read', async (t) => {
      const { store, events, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks)
      for (const name of ['a', 'b', 'c']) await createPet(store, name)
      const now = new Date()
      const claimed = await claim(webhooks, now)

      const counts = [await webhooks.scheduleWebhookDeliveries(claimed, 2), await webhooks.scheduleWebhookDeliveries(claimed, 2), await webhooks.scheduleWebhookDeliveries(claimed, 2)]

      assert.deepEqual(counts, [2, 1, 0])
      assert.deepEqual(await deliverAll(webhooks, claimed, now), await eventIds(events))
    })

    test('When an endpoint asks for some event types, then only those are scheduled, and the others are passed over', async (t) => {
      const { store, events, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks, ['pet.updated'])
      const petId = await createPet(store)
      await store.updatePet(petId, { status: 'pending' })
      const now = new Date()
      const claimed = await claim(webhooks, now)

      assert.equal(await webhooks.scheduleWebhookDeliveries(claimed, 100), 1)
      assert.deepEqual(await deliverAll(webhooks, claimed, now), (await eventIds(events)).slice(1))
      await webhooks.releaseWebhookEndpoint(claimed, now)
      assert.equal(await webhooks.claimWebhookEndpoint(now, LEASE_MS, 'token-b', true), undefined, 'nothing is left to do')
    })

    test('When an endpoint is claimed, then nobody else claims it until its lease runs out or is given back', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()

      const first = await claim(webhooks, now, 'token-a')
      const whileHeld = await webhooks.claimWebhookEndpoint(later(now, LEASE_MS - 1), LEASE_MS, 'token-b', true)
      const afterExpiry = await webhooks.claimWebhookEndpoint(later(now, LEASE_MS), LEASE_MS, 'token-b', true)
      await webhooks.releaseWebhookEndpoint(afterExpiry ?? first, now)
      const afterRelease = await webhooks.claimWebhookEndpoint(later(now, LEASE_MS), LEASE_MS, 'token-c', true)

      assert.equal(whileHeld, undefined)
      assert.equal(afterExpiry?.id, first.id)
      assert.equal(afterExpiry?.leaseToken, 'token-b')
      assert.equal(afterRelease?.leaseToken, 'token-c')
    })

    test('When instances claim at once, then each endpoint is taken by one of them only', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      const ids = [await addEndpoint(webhooks), await addEndpoint(webhooks), await addEndpoint(webhooks)]
      await createPet(store)
      const now = new Date()

      const claims = await Promise.all(Array.from({ length: 6 }, async (_, i) => await webhooks.claimWebhookEndpoint(now, LEASE_MS, `token-${i}`, true)))

      const taken = claims.flatMap((claimed) => claimed === undefined ? [] : [claimed.id])
      assert.deepEqual(taken.toSorted((a, b) => a - b), ids)
    })

    test('When a delivery is due again, then its lease is renewed with it', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)

      await webhooks.nextDueWebhookDeliveries(claimed, later(now, LEASE_MS - 1), LEASE_MS, 1)

      assert.equal(await webhooks.claimWebhookEndpoint(later(now, LEASE_MS), LEASE_MS, 'token-b', true), undefined)
      assert.ok(await webhooks.claimWebhookEndpoint(later(now, 2 * LEASE_MS - 1), LEASE_MS, 'token-b', true) !== undefined)
    })

    test('When an attempt fails, then the delivery waits for its retry time, and is given up when the schedule is exhausted', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)
      const due = (await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 1))[0]
      assert.ok(due !== undefined)

      await webhooks.recordWebhookAttempts(claimed, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'HTTP 500', retryAt: later(now, 1_000), disable: false } }], now)
      const beforeRetry = (await webhooks.nextDueWebhookDeliveries(claimed, later(now, 999), LEASE_MS, 1))[0]
      const retry = (await webhooks.nextDueWebhookDeliveries(claimed, later(now, 1_000), LEASE_MS, 1))[0]
      await webhooks.recordWebhookAttempts(claimed, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'timed out', retryAt: undefined, disable: false } }], later(now, 1_000))
      const afterGivingUp = (await webhooks.nextDueWebhookDeliveries(claimed, later(now, 10_000), LEASE_MS, 1))[0]

      assert.equal(beforeRetry, undefined)
      assert.deepEqual({ eventId: retry?.eventId, attempts: retry?.attempts }, { eventId: due.eventId, attempts: 1 })
      assert.equal(afterGivingUp, undefined)
      const [listed] = await webhooks.listWebhookEndpoints()
      assert.deepEqual({ id: listed?.id, waiting: listed?.waiting, failed: listed?.failed, lastFailure: listed?.lastFailure, lastFailureAt: listed?.lastFailureAt, lastSuccessAt: listed?.lastSuccessAt },
        { id, waiting: 0, failed: 1, lastFailure: 'timed out', lastFailureAt: later(now, 1_000).toISOString(), lastSuccessAt: null })
    })

    test('When an endpoint fails then succeeds, then its failure streak starts at the first failure and ends with the success', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks)
      await createPet(store, 'a')
      const now = new Date()
      const first = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(first, 100)
      const due = (await webhooks.nextDueWebhookDeliveries(first, now, LEASE_MS, 1))[0]
      assert.ok(due !== undefined)
      await webhooks.recordWebhookAttempts(first, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'HTTP 503', retryAt: later(now, 1_000), disable: false } }], now)
      await webhooks.recordWebhookAttempts(first, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'HTTP 503', retryAt: later(now, 2_000), disable: false } }], later(now, 1_000))
      await webhooks.releaseWebhookEndpoint(first, now)

      const failing = await claim(webhooks, later(now, 2_000))
      await deliverAll(webhooks, failing, later(now, 2_000))
      await webhooks.releaseWebhookEndpoint(failing, now)
      await createPet(store, 'b')
      const recovered = await claim(webhooks, later(now, 3_000))

      assert.equal(first.failingSince, null)
      assert.equal(failing.failingSince, now.getTime())
      assert.equal(recovered.failingSince, null)
      const [listed] = await webhooks.listWebhookEndpoints()
      assert.equal(listed?.lastSuccessAt, later(now, 2_000).toISOString())
      assert.equal(listed?.lastFailureAt, later(now, 1_000).toISOString())
    })

    test('When an attempt disables the endpoint, then it is not claimed until it is enabled again, its streak forgotten', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)
      const due = (await webhooks.nextDueWebhookDeliveries(claimed, now, LEASE_MS, 1))[0]
      assert.ok(due !== undefined)

      await webhooks.recordWebhookAttempts(claimed, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'HTTP 410', retryAt: later(now, 1_000), disable: true } }], now)
      await webhooks.releaseWebhookEndpoint(claimed, now)
      const whileDisabled = await webhooks.claimWebhookEndpoint(later(now, 5_000), LEASE_MS, 'token-b', true)
      const disabledAt = (await webhooks.listWebhookEndpoints())[0]?.disabledAt
      const enabled = await webhooks.updateWebhookEndpoint(id, { enabled: true }, now)
      const afterEnabling = await webhooks.claimWebhookEndpoint(later(now, 5_000), LEASE_MS, 'token-b', true)

      assert.equal(whileDisabled, undefined)
      assert.equal(disabledAt, now.toISOString())
      assert.ok(enabled.outcome === 'changed')
      assert.deepEqual([enabled.before.disabledAt, enabled.after.disabledAt], [now.toISOString(), null])
      assert.equal((await webhooks.listWebhookEndpoints())[0]?.disabledAt, null)
      assert.deepEqual({ id: afterEnabling?.id, failingSince: afterEnabling?.failingSince }, { id, failingSince: null })
      assert.deepEqual(await webhooks.updateWebhookEndpoint(id + 1000, { enabled: true }, now), { outcome: 'not_found' })
    })

    test('When an endpoint\'s event types are changed, then its deliveries of a type no longer wanted are dropped, waiting and given up alike, and the others kept', async (t) => {
      const { store, events, webhooks } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      const petId = await createPet(store)
      await store.updatePet(petId, { status: 'pending' })
      await createPet(store, 'Max')
      const [, updated] = await eventIds(events)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)
      await webhooks.recordWebhookAttempts(claimed, [{ eventId: updated ?? 0, outcome: { ...SENT, delivered: false, error: 'answered 500', retryAt: undefined, disable: false } }], now)
      await webhooks.releaseWebhookEndpoint(claimed, now)

      const changed = await webhooks.updateWebhookEndpoint(id, { eventTypes: ['pet.created'] }, now)

      assert.ok(changed.outcome === 'changed')
      assert.deepEqual([changed.before.waiting, changed.before.failed], [2, 1])
      assert.deepEqual([changed.after.eventTypes, changed.after.waiting, changed.after.failed], [['pet.created'], 2, 0], 'the given-up pet.updated is dropped, the two pet.created kept')
    })

    test('When a secret is rotated, then both secrets sign until the given time, and the new one alone after it', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()
      const until = later(now, 60_000)

      const rotated = await webhooks.rotateWebhookSecret(id, 'whsec_bmV3LXNlY3JldA==', until, now)
      const during = await claim(webhooks, now)
      await webhooks.releaseWebhookEndpoint(during, now)
      const after = await claim(webhooks, until)

      assert.equal(rotated, true)
      assert.deepEqual(during.secrets, ['whsec_bmV3LXNlY3JldA==', SECRET])
      assert.deepEqual(after.secrets, ['whsec_bmV3LXNlY3JldA=='])
      assert.equal(await webhooks.rotateWebhookSecret(id + 1000, 'whsec_eA==', until, now), false)
    })

    test('When a secret is rotated again inside the overlap, then every retired secret signs until its own end, and the expired ones are dropped at the next rotation', async (t) => {
      const { store, webhooks, databaseUrl } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      await createPet(store)
      const start = new Date()
      const [second, third, fourth] = ['whsec_c2Vjb25k', 'whsec_dGhpcmQ=', 'whsec_Zm91cnRo']
      const at = (minutes: number): Date => later(start, minutes * 60_000)

      // the first secret retired at 0 until 60, the second at 10 until 70
      await webhooks.rotateWebhookSecret(id, second, at(60), at(0))
      await webhooks.rotateWebhookSecret(id, third, at(70), at(10))
      const secretsAt = async (minutes: number): Promise<string[]> => {
        const claimed = await claim(webhooks, at(minutes))
        await webhooks.releaseWebhookEndpoint(claimed, at(minutes))
        return claimed.secrets
      }

      assert.deepEqual(await secretsAt(20), [third, second, SECRET], 'each retired secret still signs, newest first')
      assert.deepEqual(await secretsAt(65), [third, second], 'the first secret ended at 60, the second still signs')
      assert.deepEqual(await secretsAt(70), [third])
      // at 80 both retired secrets have ended: the rotation keeps only the one it retires now
      await webhooks.rotateWebhookSecret(id, fourth, at(80 + 24 * 60), at(80))
      const [row] = await execSql(databaseUrl, 'SELECT retired_secrets FROM webhook_endpoints')
      assert.deepEqual(JSON.parse(String(row?.retired_secrets)), [{ secret: third, until: at(80 + 24 * 60).getTime() }])
    })

    test('When endpoints are listed, then they come in id order with their queue counted, and never with a secret', async (t) => {
      const { store, webhooks, databaseUrl } = await openFresh(t, kind)
      const created = await webhooks.createWebhookEndpoint({ name: 'crm', url: 'https://crm.example.com/in', eventTypes: ['pet.created'], secret: SECRET }, new Date('2026-11-25T09:30:00.000Z'))
      await addEndpoint(webhooks)
      await addEndpoint(webhooks, ['pet.updated'])
      await createPet(store)
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)

      const listed = await webhooks.listWebhookEndpoints()

      const none = { description: null, rateLimit: null, signing: 'hmac-sha256', publicKey: null, disabledAt: null, waiting: 0, failed: 0, lastSuccessAt: null, lastFailureAt: null, lastFailure: null }
      assert.deepEqual(created, { id: created.id, name: 'crm', url: 'https://crm.example.com/in', eventTypes: ['pet.created'], createdAt: '2026-11-25T09:30:00.000Z', ...none })
      // the first's delivery is queued; the second's event waits to be scheduled; the third wants no pet.created
      assert.deepEqual(listed.map(({ id, waiting }) => ({ id, waiting })), [{ id: created.id, waiting: 1 }, { id: created.id + 1, waiting: 1 }, { id: created.id + 2, waiting: 0 }])
      assert.doesNotMatch(JSON.stringify(listed), /whsec_/)
      assert.equal(await execSql(databaseUrl, 'SELECT secret FROM webhook_endpoints').then((rows) => rows.length), 3)
    })

    test('When an endpoint is removed, then its queue goes with it', async (t) => {
      const { store, webhooks, databaseUrl } = await openFresh(t, kind)
      const id = await addEndpoint(webhooks)
      await createPet(store)
      const claimed = await claim(webhooks, new Date())
      await webhooks.scheduleWebhookDeliveries(claimed, 100)

      const removed = await webhooks.removeWebhookEndpoint(id)

      assert.equal(removed, true)
      assert.deepEqual(await webhooks.listWebhookEndpoints(), [])
      assert.deepEqual(await execSql(databaseUrl, 'SELECT event_id FROM webhook_deliveries'), [])
      assert.equal(await webhooks.removeWebhookEndpoint(id), false)
    })

    test('When events wait for a delivery, then the oldest one tells how far behind the webhooks are', async (t) => {
      const { store, events, webhooks } = await openFresh(t, kind)
      await createPet(store, 'before')
      const beforeAny = await webhooks.oldestUndeliveredEventAt()
      await addEndpoint(webhooks)
      const noneYet = await webhooks.oldestUndeliveredEventAt()
      await createPet(store, 'a')
      await createPet(store, 'b')
      const [, a] = (await events.listEvents({ afterId: 0, limit: 100 })).events
      assert.ok(a !== undefined)

      const unscheduled = await webhooks.oldestUndeliveredEventAt()
      const now = new Date()
      const claimed = await claim(webhooks, now)
      await webhooks.scheduleWebhookDeliveries(claimed, 100)
      const scheduled = await webhooks.oldestUndeliveredEventAt()
      await deliverAll(webhooks, claimed, now)
      const delivered = await webhooks.oldestUndeliveredEventAt()

      assert.deepEqual([beforeAny, noneYet], [undefined, undefined])
      assert.deepEqual([unscheduled, scheduled], [new Date(a.occurredAt), new Date(a.occurredAt)])
      assert.equal(delivered, undefined)
    })

    test('When a lease was taken over, then its former holder writes nothing', async (t) => {
      const { store, webhooks } = await openFresh(t, kind)
      await addEndpoint(webhooks)
      await createPet(store)
      const now = new Date()
      const stale = await claim(webhooks, now, 'token-a')
      const takeover = later(now, LEASE_MS)
      const current = await claim(webhooks, takeover, 'token-b')

      const scheduledByStale = await webhooks.scheduleWebhookDeliveries(stale, 100)
      await webhooks.scheduleWebhookDeliveries(current, 100)
      const due = (await webhooks.nextDueWebhookDeliveries(current, takeover, LEASE_MS, 1))[0]
      assert.ok(due !== undefined)
      const dueToStale = (await webhooks.nextDueWebhookDeliveries(stale, takeover, LEASE_MS, 1))[0]
      await webhooks.recordWebhookAttempts(stale, [{ eventId: due.eventId, outcome: { ...SENT, delivered: true } }], takeover)
      await webhooks.recordWebhookAttempts(stale, [{ eventId: due.eventId, outcome: { ...SENT, delivered: false, error: 'HTTP 500', retryAt: undefined, disable: true } }], takeover)
      await webhooks.releaseWebhookEndpoint(stale, now)

      assert.equal(scheduledByStale, 0)
      assert.equal(dueToStale, undefined)
      const [listed] = await webhooks.listWebhookEndpoints()
      assert.deepEqual({ waiting: listed?.waiting, failed: listed?.failed, disabledAt: listed?.disabledAt, lastSuccessAt: listed?.lastSuccessAt, lastFailureAt: listed?.lastFailureAt },
        { waiting: 1, failed: 0, disabledAt: null, lastSuccessAt: null, lastFailureAt: null })
      assert.equal(await webhooks.claimWebhookEndpoint(takeover, LEASE_MS, 'token-c', true), undefined, 'the current lease still holds')
      assert.deepEqual(await deliverAll(webhooks, current, takeover), [due.eventId])
    })
  })
}
