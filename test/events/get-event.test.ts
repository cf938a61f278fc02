import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, patchPet, testStores, type TestApp } from '../helpers/build-app.js'
import { mockDate } from '../helpers/clock.js'
import { type Event, followFeed } from '../helpers/events.js'
import { patchOrder, placedOrder } from '../orders/orders-helpers.js'

const DAY_MS = 86_400_000

async function getEvent (api: TestApp, id: number | string, headers: Record<string, string> = api.auth): Promise<ReturnType<TestApp['app']['inject']>> {
  return await api.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers })
}

for (const store of testStores()) {
  describe(`getEvent: one event of the feed (${store})`, () => {
    test('When events of every type are recorded, then getEvent answers each with exactly the bytes the feed\'s page holds for it, to a read key too', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 7 })
      assert.equal((await patchPet(api, pet.id, { name: 'Rexy' })).statusCode, 200)
      const order = await placedOrder(api, pet.id)
      assert.equal((await patchOrder(api, order.id, { status: 'approved', metadata: { channel: 'web' } })).statusCode, 200)
      const readKey = generateApiKey()
      await api.app.keyStore.createApiKey('storefront', hashApiKey(readKey), 'read')
      const page = await api.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: api.auth })
      const events = page.json<Event[]>()

      const answers = await Promise.all(events.map(async ({ id }) => await getEvent(api, id)))
      const byReadKey = await getEvent(api, events[0]!.id, { authorization: `Bearer ${readKey}` })
      const head = await api.app.inject({ method: 'HEAD', url: `/v1/events/${events[0]!.id}`, headers: api.auth })

      assert.deepEqual(events.map(({ type }) => type), ['pet.created', 'pet.updated', 'pet.updated', 'order.created', 'order.updated'])
      for (const answer of answers) {
        assert.equal(answer.statusCode, 200, answer.body)
        assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
      }
      assert.equal(`[${answers.map(({ body }) => body).join(',')}]`, page.body, 'the events, put side by side, are the page byte for byte')
      assert.equal(byReadKey.statusCode, 200)
      assert.equal(byReadKey.body, answers[0]!.body)
      assert.equal(head.statusCode, 200)
      assert.equal(head.body, '')
    })

    test('When an id no event was recorded with is asked for, then 404 event_not_found naming it; a malformed id is 400 naming eventId', async (t) => {
      const api = await buildTestApp(t, { store })
      await createdPet(api, { name: 'Rex', categoryId: 7 })
      const [event] = (await followFeed(api)).events as [Event]

      const missing = assertError(await getEvent(api, event.id + 1), 'event_not_found')
      const far = assertError(await getEvent(api, Number.MAX_SAFE_INTEGER), 'event_not_found')

      assert.equal(missing.message, `No event has id ${event.id + 1}: none was recorded with it.`)
      assert.equal(far.message, `No event has id ${Number.MAX_SAFE_INTEGER}: none was recorded with it.`)
      for (const id of ['0', 'abc', '1.5', '1e1', '+1', String(Number.MAX_SAFE_INTEGER + 2)]) assertError(await getEvent(api, id), 'invalid_request', '"eventId"')
      assertError(await api.app.inject({ method: 'GET', url: `/v1/events/${event.id}?expand=data`, headers: api.auth }), 'invalid_request', 'expand')
    })

    test('When retention deleted the event, then 410 events_expired naming it and the oldest event retained; a retained one still answers', async (t) => {
      mockDate(t)
      const api = await buildTestApp(t, { store, env: { EVENT_RETENTION_DAYS: '1' } })
      const old = await createdPet(api, { name: 'Old', categoryId: 1 })
      assert.equal((await patchPet(api, old.id, { status: 'pending' })).statusCode, 200)
      t.mock.timers.tick(2 * DAY_MS)
      await createdPet(api, { name: 'Fresh', categoryId: 2 })
      const [created, updated, fresh] = (await followFeed(api)).events as [Event, Event, Event]

      assert.equal(await api.app.eventRetention.purge(), 2)

      for (const gone of [created, updated]) {
        const expired = assertError(await getEvent(api, gone.id), 'events_expired')
        assert.equal(expired.message, `Event ${gone.id} is no longer retained: retention deleted the events up to ${updated.id} (the oldest retained event is ${fresh.id}).`)
      }
      assert.equal((await getEvent(api, fresh.id)).statusCode, 200)
      assertError(await getEvent(api, fresh.id + 1), 'event_not_found')
    })

    test('When the key is missing, then 401; when a method other than GET or HEAD is used, then 405 allowing them', async (t) => {
      const api = await buildTestApp(t, { store })

      const withoutKey = await api.app.inject({ method: 'GET', url: '/v1/events/1' })
      const deleted = await api.app.inject({ method: 'DELETE', url: '/v1/events/1', headers: api.auth })

      assertError(withoutKey, 'unauthorized')
      assertError(deleted, 'method_not_allowed')
      assert.equal(deleted.headers.allow, 'GET, HEAD')
    })
  })
}
