import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, patchPet, postPet, testStores, type TestApp } from '../helpers/build-app.js'
import { mockDate } from '../helpers/clock.js'
import { type Event, eventPage, followFeed, nextLinkOf } from '../helpers/events.js'
import { patchOrder, placedOrder } from '../orders/orders-helpers.js'

const DAY_MS = 86_400_000

async function allEvents (api: TestApp): Promise<Event[]> {
  return (await followFeed(api)).events
}

for (const store of testStores()) {
  describe(`listEvents: the change feed (${store})`, () => {
    test('When a pet is created, then one pet.created event carries the pet as answered, with a positive id and an RFC 3339 UTC time', async (t) => {
      const api = await buildTestApp(t, { store })
      const before = Date.now()
      const pet = await createdPet(api, { name: 'Rex', categoryId: 7 })
      const after = Date.now()

      const events = await allEvents(api)

      assert.equal(events.length, 1)
      const [event] = events as [Event]
      assert.deepEqual(Object.keys(event), ['id', 'type', 'occurredAt', 'data'])
      assert.ok(Number.isSafeInteger(event.id) && event.id > 0)
      assert.equal(event.type, 'pet.created')
      assert.match(event.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const time = Date.parse(event.occurredAt)
      assert.ok(time >= before && time <= after, `occurredAt ${event.occurredAt} is not during the request`)
      assert.deepEqual(event.data, { pet })
    })

    test('When a pet is changed, then one pet.updated event carries the pet after the change and only the changed fields as they were', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 7 })

      const res = await patchPet(api, pet.id, { status: 'pending', name: 'Rexy', categoryId: 7 })
      assert.equal(res.statusCode, 200, res.body)
      const sold = await patchPet(api, pet.id, { status: 'sold' })
      assert.equal(sold.statusCode, 200, sold.body)

      const events = await allEvents(api)
      assert.deepEqual(events.map((event) => event.type), ['pet.created', 'pet.updated', 'pet.updated'])
      assert.deepEqual(events[1]?.data, { pet: res.json<Pet>(), previous: { name: 'Rex', status: 'available' } })
      assert.deepEqual(events[2]?.data, { pet: sold.json<Pet>(), previous: { status: 'pending' } })
      const ids = events.map((event) => event.id)
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b))
    })

    test('When a request changes nothing (a PATCH to the current values, {}, a replay, a refused change, a failed create), then no event is recorded', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 7, status: 'sold' })
      const headers = { ...api.auth, 'content-type': 'application/json', 'idempotency-key': 'once' }
      const first = await api.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: { name: 'Tom', categoryId: 1 } })
      assert.equal(first.statusCode, 201)
      const baseline = await allEvents(api)
      assert.equal(baseline.length, 2)

      assert.equal((await patchPet(api, pet.id, { name: 'Rex', categoryId: 7, status: 'sold' })).statusCode, 200)
      assert.equal((await patchPet(api, pet.id, {})).statusCode, 200)
      const replay = await api.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: { name: 'Tom', categoryId: 1 } })
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assertError(await patchPet(api, pet.id, { status: 'available' }), 'invalid_transition')
      assertError(await patchPet(api, pet.id, { name: 'Max' }, { 'if-match': '"stale"' }), 'precondition_failed')
      assertError(await patchPet(api, 999, { name: 'Max' }), 'pet_not_found')
      assertError(await postPet(api, { name: 'Max' }), 'invalid_request')

      assert.deepEqual(await allEvents(api), baseline)
    })

    test('When pets are created at once (one group commit), then each has its own event, in the order of the pets\' ids', async (t) => {
      const api = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '0' } })
      const pets = await Promise.all(Array.from({ length: 30 }, async (_, i) => await createdPet(api, { name: `Pet ${i}`, categoryId: i })))

      const events = await allEvents(api)

      assert.equal(events.length, 30)
      const byId = [...pets].sort((a, b) => a.id - b.id)
      assert.deepEqual(events.map((event) => (event.data as { pet: unknown }).pet), byId)
      assert.ok(events.every((event, i) => i === 0 || event.id > (events[i - 1] as Event).id))
    })

    test('When the feed is paged with limit, after and type, then following next returns each matching event once, and an empty page links to the same after', async (t) => {
      const api = await buildTestApp(t, { store })
      for (let i = 0; i < 5; i++) {
        const pet = await createdPet(api, { name: `Pet ${i}`, categoryId: i })
        if (i % 2 === 0) assert.equal((await patchPet(api, pet.id, { status: 'pending' })).statusCode, 200)
      }
      const every = await allEvents(api)
      assert.equal(every.length, 8)

      const first = await eventPage(api, '/v1/events?limit=3')
      assert.deepEqual(first.events, every.slice(0, 3))
      assert.equal(first.next, `/v1/events?after=${every[2]?.id}&limit=3`)
      const paged = await followFeed(api, '/v1/events?limit=3')
      assert.deepEqual(paged.events, every)
      assert.equal(paged.next, `/v1/events?after=${every.at(-1)?.id}&limit=3`)

      const updates = await followFeed(api, '/v1/events?type=pet.updated&limit=2')
      assert.deepEqual(updates.events, every.filter((event) => event.type === 'pet.updated'))
      assert.match(updates.next, /&type=pet\.updated$/)

      const middle = every[3] as Event
      assert.deepEqual((await eventPage(api, `/v1/events?after=${middle.id}&limit=100`)).events, every.slice(4))

      // polling: the empty page's link is the same position, and the next change appears there
      const empty = await api.app.inject({ method: 'GET', url: paged.next, headers: api.auth })
      assert.deepEqual(empty.json(), [])
      assert.equal(nextLinkOf(empty), paged.next)
      const later = await createdPet(api, { name: 'Later', categoryId: 9 })
      assert.deepEqual((await eventPage(api, paged.next)).events.map((event) => (event.data as { pet: unknown }).pet), [later])
    })

    test('When the feed is filtered on several types, repeated, then only events of those types come, and every next link repeats each type', async (t) => {
      const api = await buildTestApp(t, { store })
      for (let i = 0; i < 3; i++) {
        const pet = await createdPet(api, { name: `Pet ${i}`, categoryId: i })
        const order = await placedOrder(api, pet.id)
        assert.equal((await patchOrder(api, order.id, { status: 'cancelled' })).statusCode, 200)
      }
      const every = await allEvents(api)

      const chosen = await followFeed(api, '/v1/events?type=pet.created&type=order.updated&limit=2')
      assert.deepEqual(chosen.events, every.filter((event) => event.type === 'pet.created' || event.type === 'order.updated'))
      assert.equal(chosen.events.length, 6)
      assert.match(chosen.next, /&type=pet\.created&type=order\.updated$/)
      const first = await eventPage(api, '/v1/events?type=order.updated&type=pet.created&limit=2')
      assert.equal(first.next, `/v1/events?after=${first.events[1]?.id}&limit=2&type=order.updated&type=pet.created`)

      const one = await followFeed(api, '/v1/events?type=order.created')
      assert.deepEqual(one.events, every.filter((event) => event.type === 'order.created'))
      assertError(await api.app.inject({ method: 'GET', url: '/v1/events?type=pet.created&type=pet.deleted', headers: api.auth }),
        'invalid_request', 'query parameter "type": "pet.deleted" must be one of "pet.created", "pet.updated", "order.created", "order.updated"')
    })

    test('When the store has no event yet, then the feed is an empty page whose next link starts after 0', async (t) => {
      const api = await buildTestApp(t, { store })
      const res = await api.app.inject({ method: 'GET', url: '/v1/events', headers: api.auth })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), [])
      assert.equal(nextLinkOf(res), '/v1/events?after=0&limit=20')
    })

    test('When a query parameter is invalid or unknown, then the answer is 400 naming it, and nothing else is said', async (t) => {
      const api = await buildTestApp(t, { store })
      const cases: Array<[string, string]> = [
        ['after=-1', 'query parameter "after" must be >= 0'],
        ['after=abc', 'query parameter "after" must be an integer'],
        ['after=1.5', 'query parameter "after" must be an integer'],
        ['after=9007199254740992', 'query parameter "after" must be <= 9007199254740991'],
        ['limit=0', 'query parameter "limit" must be >= 1'],
        ['limit=101', 'query parameter "limit" must be <= 100'],
        ['type=pet.deleted', 'query parameter "type": "pet.deleted" must be one of'],
        ['cursor=abc', 'query parameter "cursor"']
      ]
      for (const [query, message] of cases) {
        assertError(await api.app.inject({ method: 'GET', url: `/v1/events?${query}`, headers: api.auth }), 'invalid_request', message)
      }
    })

    test('When the key is missing or unknown, then 401; when it is a read key, then the feed is served', async (t) => {
      const api = await buildTestApp(t, { store })
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      assertError(await api.app.inject({ method: 'GET', url: '/v1/events' }), 'unauthorized')
      assertError(await api.app.inject({ method: 'GET', url: '/v1/events', headers: { authorization: `Bearer ${generateApiKey()}` } }), 'unauthorized')

      const readKey = generateApiKey()
      await api.app.keyStore.createApiKey('storefront', hashApiKey(readKey), 'read')
      const res = await api.app.inject({ method: 'GET', url: '/v1/events', headers: { authorization: `Bearer ${readKey}` } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json<Event[]>().length, 1)
    })

    test('When events are older than the retention period, then retention deletes them, and after an id before them is 410 naming the oldest retained id', async (t) => {
      // the clock moved, not slept: Date is mocked for the app (its clock) and the store (its stamps) alike
      mockDate(t)
      const api = await buildTestApp(t, { store, env: { EVENT_RETENTION_DAYS: '2' } })
      const old = await createdPet(api, { name: 'Old', categoryId: 1 })
      assert.equal((await patchPet(api, old.id, { status: 'pending' })).statusCode, 200)
      t.mock.timers.tick(DAY_MS)
      await createdPet(api, { name: 'Fresh', categoryId: 2 })
      const [, updated, fresh] = await allEvents(api) as [Event, Event, Event]

      t.mock.timers.tick(DAY_MS + 60_000)
      assert.equal(await api.app.eventRetention.purge(), 2, 'the two events older than two days are deleted')
      assert.equal(await api.app.eventRetention.purge(), 0, 'a second pass finds nothing more')

      const expired = assertError(await api.app.inject({ method: 'GET', url: '/v1/events?after=0', headers: api.auth }), 'events_expired')
      assert.equal(expired.message, `Events after 0 up to ${updated.id} are no longer retained (the oldest retained event is ${fresh.id}): ` +
        `resynchronize from the catalogue (listPets), then follow the feed from after=${updated.id}.`)
      const gone = await api.app.inject({ method: 'GET', url: `/v1/events?after=${updated.id - 1}&limit=5`, headers: api.auth })
      assertError(gone, 'events_expired')
      assert.equal(nextLinkOf(gone), `/v1/events?after=${updated.id}&limit=5`, 'the 410 links to where the feed resumes')
      assert.deepEqual((await eventPage(api, `/v1/events?after=${updated.id}`)).events, [fresh])
      assert.deepEqual((await eventPage(api, '/v1/events')).events, [fresh])

      t.mock.timers.tick(2 * DAY_MS)
      assert.equal(await api.app.eventRetention.purge(), 1)
      const empty = await api.app.inject({ method: 'GET', url: '/v1/events', headers: api.auth })
      assert.deepEqual(empty.json(), [])
      assert.equal(nextLinkOf(empty), `/v1/events?after=${fresh.id}&limit=20`, 'from the start, the next page starts after what was deleted')
      assertError(await api.app.inject({ method: 'GET', url: `/v1/events?after=${updated.id}`, headers: api.auth }), 'events_expired', 'no event is retained now')

      // ids never go back, even after every event was deleted
      const next = await createdPet(api, { name: 'Next', categoryId: 3 })
      const [event] = (await eventPage(api, `/v1/events?after=${fresh.id}`)).events as [Event]
      assert.ok(event.id > fresh.id)
      assert.deepEqual(event.data, { pet: next })
    })

    test('When retention deleted only events of one type, then a consumer filtering on another type is not told it missed any', async (t) => {
      mockDate(t)
      const api = await buildTestApp(t, { store, env: { EVENT_RETENTION_DAYS: '1' } })
      const old = await createdPet(api, { name: 'Old', categoryId: 1 })
      t.mock.timers.tick(2 * DAY_MS)
      assert.equal((await patchPet(api, old.id, { status: 'pending' })).statusCode, 200)
      const [created, updated] = await allEvents(api) as [Event, Event]
      assert.equal(await api.app.eventRetention.purge(), 1)

      assert.deepEqual((await eventPage(api, '/v1/events?after=0&type=pet.updated')).events, [updated])
      assertError(await api.app.inject({ method: 'GET', url: '/v1/events?after=0&type=pet.created', headers: api.auth }), 'events_expired', `up to ${created.id}`)
      assertError(await api.app.inject({ method: 'GET', url: '/v1/events?after=0', headers: api.auth }), 'events_expired')
    })
  })
}
