import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { performance } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import { createClient, type Pet, type PetStoreEvent, type RetryEvent } from '@petstore/client'
import { testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startFollowing, startService, type LiveService, type ServedRequest } from '../helpers/client-service.js'
import { manualClock, mockDate } from '../helpers/clock.js'
import { bigOrder, copiesBeyondSocketBuffers, insertCopies } from '../helpers/stream-backlog.js'

const DAY_MS = 86_400_000
// copies of a 10 KiB event: pages of a stream's own reads, more than the socket's buffers hold once the client has read (5,700 here)
const BEHIND_COPIES = copiesBeyondSocketBuffers()

/** Resolves once `condition` holds; fails naming `what` after `timeoutMs`. */
async function waitFor (what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await delay(2)
  }
}

/** The feed requests the service has answered so far. */
function feedRequests (service: LiveService): ServedRequest[] {
  return service.served.filter((request) => request.url.startsWith('/v1/events'))
}

/** The pet a pet event carries (order events carry none). */
function petOf (event: PetStoreEvent): Pet | undefined {
  return 'pet' in event.data ? event.data.pet : undefined
}

for (const store of testStores()) {
  describe(`@petstore/client change feed against the live service (${store})`, () => {
    test('When listEvents pages through the feed, then every change comes once in id order, and nextAfter leads on (unchanged on an empty page)', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 7 })
      const bella = await client.createPet({ name: 'Bella', categoryId: 2 })
      await client.updatePet(rex.id, { status: 'pending' })
      await client.updatePet(rex.id, {})

      const first = await client.listEvents({ limit: 2 })
      const second = await client.listEvents({ limit: 2, after: first.nextAfter })
      const third = await client.listEvents({ limit: 2, after: second.nextAfter })

      assert.deepEqual(first.events.map(({ type, data }) => ({ type, data })), [
        { type: 'pet.created', data: { pet: rex } },
        { type: 'pet.created', data: { pet: bella } }
      ])
      assert.deepEqual(second.events.map(({ type, data }) => ({ type, data })), [
        { type: 'pet.updated', data: { pet: { ...rex, status: 'pending' }, previous: { status: 'available' } } }
      ])
      const ids = [...first.events, ...second.events].map((event) => event.id)
      assert.ok(ids.every((id, i) => i === 0 || id > Number(ids[i - 1])), `ids in order: ${ids.join(', ')}`)
      assert.equal(first.nextAfter, first.events[1]?.id)
      assert.equal(second.nextAfter, second.events[0]?.id)
      assert.deepEqual(third, { events: [], nextAfter: second.nextAfter })
      for (const event of [...first.events, ...second.events]) assert.equal(new Date(event.occurredAt).toISOString(), event.occurredAt)
    })

    test('When listEvents is given a type, then only events of that type come, page after page', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const empty = await client.listEvents()
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.updatePet(rex.id, { name: 'Rex II' })
      const bella = await client.createPet({ name: 'Bella', categoryId: 1 })

      const updated = await client.listEvents({ type: 'pet.updated' })
      const firstCreated = await client.listEvents({ type: 'pet.created', limit: 1 })
      const secondCreated = await client.listEvents({ type: 'pet.created', limit: 1, after: firstCreated.nextAfter })

      assert.deepEqual(empty, { events: [], nextAfter: 0 })
      assert.deepEqual(updated.events.map(({ type, data }) => ({ type, data })), [
        { type: 'pet.updated', data: { pet: { ...rex, name: 'Rex II' }, previous: { name: 'Rex' } } }
      ])
      assert.deepEqual([...firstCreated.events, ...secondCreated.events].map(petOf), [rex, bella])
    })

    test('When listEvents and events.follow are given a list of types, then only events of those types come, the type repeated in every request', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      const order = await client.placeOrder({ petId: rex.id })
      await client.updateOrder(order.id, { status: 'cancelled' })
      await client.createPet({ name: 'Bella', categoryId: 1 })
      const every = (await client.listEvents({ limit: 100 })).events

      const chosen = await client.listEvents({ type: ['pet.created', 'order.updated'] })
      const following = startFollowing(t, client, { type: ['order.created', 'order.updated'], limit: 1, stream: false })
      await waitFor('the two order events', () => following.seen.length === 2)
      following.controller.abort()
      await following.done

      assert.deepEqual(chosen.events, every.filter((event) => event.type === 'pet.created' || event.type === 'order.updated'))
      assert.deepEqual(following.seen, every.filter((event) => event.type.startsWith('order.')))
      assert.ok(feedRequests(service).slice(-2).every((request) => request.url.includes('type=order.created&type=order.updated')))
    })

    test('When getEvent is asked for each id of the feed, then it answers each event as listEvents does; an id none has fails with event_not_found, 404, without a retry', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 7 })
      await client.updatePet(rex.id, { status: 'pending' })
      const order = await client.placeOrder({ petId: (await client.createPet({ name: 'Bella', categoryId: 2 })).id })
      await client.updateOrder(order.id, { status: 'cancelled' })
      const { events } = await client.listEvents({ limit: 100 })

      const got = await Promise.all(events.map(async ({ id }) => await client.getEvent(id)))
      const error = await petStoreError(() => client.getEvent(Number(events.at(-1)?.id) + 1))

      assert.deepEqual(new Set(events.map(({ type }) => type)), new Set(['pet.created', 'pet.updated', 'order.created', 'order.updated']))
      assert.deepEqual(got, events)
      assert.equal(error.code, 'event_not_found')
      assert.equal(error.status, 404)
      assert.equal(error.operation, 'getEvent')
      assert.equal(error.attempts, 1)
    })

    test('When listEvents is given an invalid limit, then PetStoreError carries invalid_request, 400, without a retry', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)

      const error = await petStoreError(() => client.listEvents({ limit: 0 }))

      assert.equal(error.code, 'invalid_request')
      assert.equal(error.status, 400)
      assert.equal(error.operation, 'listEvents')
      assert.equal(error.attempts, 1)
      assert.match(error.message, /limit/)
    })

    test('When events.follow polls (stream: false), then it yields the events from before and after it started, in order, each once, until aborted', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Bella', categoryId: 1 })
      await client.createPet({ name: 'Coco', categoryId: 1 })

      // aborted just after a poll, so during the pause: a request cut mid-flight can hold app.close() for the drain's 10 s
      const following = startFollowing(t, client, { limit: 2, pollIntervalMs: 100, stream: false })
      await waitFor('the three earlier events', () => following.seen.length === 3)
      const polled = feedRequests(service).length
      await waitFor('two polls of an empty feed', () => feedRequests(service).length >= polled + 2)
      await client.updatePet(rex.id, { status: 'sold' })
      await client.createPet({ name: 'Dina', categoryId: 1 })
      await waitFor('the two later events', () => following.seen.length === 5)
      const caughtUp = feedRequests(service).length
      await waitFor('two more polls', () => feedRequests(service).length >= caughtUp + 2)
      following.controller.abort()
      await following.done

      const feed = await client.listEvents({ limit: 100 })
      assert.deepEqual(following.seen, feed.events)
      assert.deepEqual(following.seen.map((event) => event.type), ['pet.created', 'pet.created', 'pet.created', 'pet.updated', 'pet.created'])
      assert.ok(feedRequests(service).every((request) => request.status === 200))
    })

    test('When the signal aborts while events.follow (polling) waits after an empty page, then it ends at once, without an error', async (t) => {
      const service = await startService(t, { store })
      const client = clientOf(service, { eventPollIntervalMs: 60_000 })
      await client.createPet({ name: 'Rex', categoryId: 1 })

      const following = startFollowing(t, client, { stream: false })
      await waitFor('a page with the event, then an empty one', () => feedRequests(service).length === 2)
      await delay(50)
      const aborted = performance.now()
      following.controller.abort()
      await following.done

      // the bound is the behaviour: it ended on the abort, not after the 60 s pause; 10 s is room for a loaded machine
      assert.ok(performance.now() - aborted < 10_000, `ended ${(performance.now() - aborted).toFixed(0)} ms after the abort, not at once`)
      assert.equal(following.seen.length, 1)
      assert.equal(feedRequests(service).length, 2)
    })

    test('When retention deleted events after the position events.follow starts from, then it throws events_expired, 410, and following from the start resumes', async (t) => {
      const clock = manualClock()
      const service = await startService(t, { store, clock })
      const client = clientOf(service)
      await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Bella', categoryId: 1 })
      const { nextAfter: position } = await client.listEvents({ limit: 1 })
      // events are stamped with the app's clock, which retention measures from too
      clock.advance(10)
      const cutoff = clock.now()
      clock.advance(10)
      const dina = await client.createPet({ name: 'Dina', categoryId: 1 })
      clock.advance(cutoff + service.config.eventRetentionDays * DAY_MS - clock.now())
      assert.equal(await service.app.eventRetention.purge(), 2)

      const error = await petStoreError(async () => {
        for await (const event of client.events.follow({ after: position, signal: new AbortController().signal })) assert.fail(`yielded ${event.id}`)
      })
      // the resynchronized consumer follows from the oldest event retained; the first it sees is Dina's
      const resumed = await client.events.follow({ signal: new AbortController().signal }).next()

      assert.equal(error.code, 'events_expired')
      assert.equal(error.status, 410)
      assert.equal(error.operation, 'listEvents')
      assert.equal(error.attempts, 1)
      assert.deepEqual(resumed.done === false ? petOf(resumed.value) : undefined, dina)
    })

    test('When retention passes the stream events.follow reads while it is behind, then its last message is thrown as events_expired, 410, as a page\'s 410 is, without reconnecting', async (t) => {
      mockDate(t)
      // a backlog bound and a heartbeat the stream never reaches: the loop below, which asks for nothing, alone holds it behind
      const service = await startService(t, { store, env: { EVENT_RETENTION_DAYS: '1', EVENT_STREAM_MAX_BACKLOG_KIB: '1048576', EVENT_STREAM_HEARTBEAT_SECONDS: '300' } })
      const client = clientOf(service)
      await bigOrder(service)
      for (let batch = 0; batch < BEHIND_COPIES / 100; batch++) await insertCopies(service, 100)
      const following = client.events.follow({ signal: new AbortController().signal })
      const first = await following.next()
      assert.equal(first.done, false)
      t.mock.timers.tick(2 * DAY_MS)
      await client.createPet({ name: 'Fresh', categoryId: 1 })
      assert.ok(await service.app.eventRetention.purge() >= BEHIND_COPIES)

      let yielded = 1
      const error = await petStoreError(async () => {
        for await (const event of following) {
          assert.notEqual(petOf(event)?.name, 'Fresh', 'no event after the deleted ones')
          yielded++
        }
      })

      assert.equal(error.code, 'events_expired')
      assert.equal(error.status, 410)
      assert.equal(error.operation, 'listEvents')
      assert.equal(error.attempts, 1)
      assert.ok(yielded < BEHIND_COPIES, `the stream was behind: ${yielded} events before the error`)
      assert.equal(feedRequests(service).length, 1, 'thrown from the stream, without asking again')
    })
  })
}

describe('events.follow and the retry policy', () => {
  test('When events.follow, polling, goes over the rate limit, then it waits the Retry-After and carries on, each event once', async (t) => {
    const service = await startService(t, { env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1' } })
    const retries: RetryEvent[] = []
    const client = clientOf(service, { onRetry: (event) => { retries.push(event) } })
    for (const name of ['Rex', 'Bella', 'Coco']) await client.createPet({ name, categoryId: 1 })

    const following = startFollowing(t, client, { limit: 1, pollIntervalMs: 100, stream: false })
    await waitFor('the three events', () => following.seen.length === 3)
    await waitFor('a 429 and a poll after it', () => feedRequests(service).some((r, i, all) => r.status === 429 && all[i + 1]?.status === 200))
    following.controller.abort()
    await following.done

    assert.deepEqual(following.seen.map((event) => petOf(event)?.name), ['Rex', 'Bella', 'Coco'])
    assert.ok(retries.some((retry) => retry.operation === 'listEvents' && retry.error.code === 'rate_limited'))
  })

  test('When events.follow is called without a valid signal or pause, then it throws a TypeError at once, and an aborted signal yields nothing', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'key', fetch: async () => assert.fail('no request is sent') })
    const aborted = AbortSignal.abort()
    const yielded: PetStoreEvent[] = []

    // @ts-expect-error the signal is required
    assert.throws(() => client.events.follow({}), TypeError)
    assert.throws(() => client.events.follow({ signal: aborted, pollIntervalMs: 0 }), /pollIntervalMs/)
    assert.throws(() => createClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'key', eventPollIntervalMs: -1 }), /eventPollIntervalMs/)
    for await (const event of client.events.follow({ signal: aborted })) yielded.push(event)

    assert.deepEqual(yielded, [])
  })
})
