import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { testStores } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'
import { buildWebhookApi, recordPet, registered } from '../helpers/webhook-api.js'

// /v1/webhook-endpoints through the real app (authentication, the role check, validation, the store) and real
// receivers on 127.0.0.1; one delivery in flight an endpoint, so its deliveries arrive in event-id order
const ENV = { WEBHOOK_ENDPOINT_CONCURRENCY: '1' }
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/

const webhookIds = (requests: ReadonlyArray<{ headers: Record<string, unknown> }>): number[] => requests.map((request) => Number(request.headers['webhook-id']))

for (const store of testStores()) {
  describe(`/v1/webhook-endpoints (${store})`, () => {
    test('When an admin key registers an endpoint, then 201 carries its Location, ETag and secret once; reading and listing it show its health and never the secret', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const receiver = await webhookReceiver(t)

      const res = await api.call('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['order.created', 'pet.created'], description: 'storefront', rateLimit: 50 })
      const created = res.json()
      const one = await api.call('GET', `/v1/webhook-endpoints/${created.id}`)
      const list = await api.call('GET', '/v1/webhook-endpoints')

      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.headers.location, `/v1/webhook-endpoints/${created.id}`)
      assert.match(created.secret, SECRET)
      assert.deepEqual({ ...created, secret: undefined, createdAt: undefined }, {
        id: created.id,
        url: receiver.url,
        events: ['pet.created', 'order.created'],
        name: new URL(receiver.url).host,
        description: 'storefront',
        disabled: false,
        rateLimit: 50,
        signing: 'hmac-sha256',
        createdAt: undefined,
        health: { waiting: 0, failed: 0 },
        secret: undefined
      }, 'the events in the registry\'s order, the name the URL\'s host by default')
      assert.equal(one.statusCode, 200)
      const { secret: _secret, ...endpoint } = created
      assert.deepEqual(one.json(), endpoint)
      assert.equal(one.headers.etag, res.headers.etag, 'the 201\'s tag is the one a read gives')
      assert.deepEqual(list.json(), [one.json()])
      assert.doesNotMatch(one.body + list.body, /whsec_/)
    })

    test('When a key without the admin role or no key at all asks, then every endpoint operation answers 403 insufficient_scope or 401, and nothing is registered', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const write = await api.keyOf('write')
      const read = await api.keyOf('read')
      const operations: Array<[string, string, unknown?]> = [
        ['POST', '/v1/webhook-endpoints', { url: 'https://93.184.215.14/hooks', events: ['pet.created'] }],
        ['GET', '/v1/webhook-endpoints'],
        ['GET', '/v1/webhook-endpoints/1'],
        ['PATCH', '/v1/webhook-endpoints/1', { disabled: true }],
        ['DELETE', '/v1/webhook-endpoints/1'],
        ['POST', '/v1/webhook-endpoints/1/rotate-secret'],
        ['POST', '/v1/webhook-endpoints/1/test'],
        ['GET', '/v1/webhook-endpoints/1/attempts'],
        ['POST', '/v1/webhook-endpoints/1/resend', { eventId: 1 }],
        ['POST', '/v1/webhook-endpoints/1/recover', { since: new Date().toISOString() }]
      ]
      for (const [method, url, body] of operations) {
        for (const [role, auth] of [['write', write], ['read', read]] as const) {
          const res = await api.app.inject({ method: method as 'GET', url, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
          assertError(res, 'insufficient_scope', `This API key has the ${role} role`)
          assert.match(res.json().message, /needs a key with the admin role/)
        }
        assertError(await api.app.inject({ method: method as 'GET', url }), 'unauthorized')
      }
      assert.deepEqual(await api.app.webhookStore.listWebhookEndpoints(), [])
    })

    test('When a create is repeated with its Idempotency-Key, then the first answer is replayed with its secret and nothing more is registered; another body with the key is 422', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const body = { url: 'https://93.184.215.14/hooks', events: ['pet.created'] }

      const first = await api.call('POST', '/v1/webhook-endpoints', body, { 'idempotency-key': 'endpoint-1' })
      const again = await api.call('POST', '/v1/webhook-endpoints', body, { 'idempotency-key': 'endpoint-1' })
      const other = await api.call('POST', '/v1/webhook-endpoints', { ...body, events: ['pet.updated'] }, { 'idempotency-key': 'endpoint-1' })
      const withoutKey = await api.call('POST', '/v1/webhook-endpoints', body)

      assert.equal(first.statusCode, 201)
      assert.equal(again.statusCode, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.deepEqual(again.json(), first.json())
      assert.equal(again.headers.etag, first.headers.etag)
      assertError(other, 'idempotency_key_reused')
      assertError(withoutKey, 'webhook_endpoint_exists', `registered already as webhook endpoint ${first.json().id}`)
      assert.equal((await api.app.webhookStore.listWebhookEndpoints()).length, 1)
    })

    test('When more endpoints exist than a page holds, then the list pages by the next links in id order, each once; a cursor altered or from another list is 400 invalid_cursor', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const ids: number[] = []
      for (let i = 0; i < 5; i++) ids.push((await registered(api, { url: `https://93.184.215.14/hooks/${i}`, events: ['pet.created'] })).id)

      const seen: number[] = []
      let url: string | undefined = '/v1/webhook-endpoints?limit=2'
      while (url !== undefined) {
        const res = await api.call('GET', url)
        assert.equal(res.statusCode, 200, res.body)
        seen.push(...res.json().map((endpoint: { id: number }) => endpoint.id))
        const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
        url = next === undefined ? undefined : new URL(next).pathname + new URL(next).search
      }
      const first = await api.call('GET', '/v1/webhook-endpoints?limit=2')
      const cursor = new URL(/<([^>]+)>/.exec(String(first.headers.link))?.[1] ?? '').searchParams.get('cursor') ?? ''
      const petCursor = new URL(/<([^>]+)>/.exec(String((await api.call('GET', '/v1/pets?limit=1')).headers.link ?? '<http://x/?cursor=none>'))?.[1] ?? '').searchParams.get('cursor') ?? 'none'

      assert.deepEqual(seen, ids)
      // one character of the middle changed (the last ones may hold bits a decoder drops, and may be "xx" already)
      const middle = Math.floor(cursor.length / 2)
      const altered = cursor.slice(0, middle) + (cursor[middle] === 'A' ? 'B' : 'A') + cursor.slice(middle + 1)
      assertError(await api.call('GET', `/v1/webhook-endpoints?cursor=${altered}`), 'invalid_cursor')
      assertError(await api.call('GET', `/v1/webhook-endpoints?cursor=${petCursor}`), 'invalid_cursor')
    })

    test('When an endpoint is read with If-None-Match, then 304 until a delivery changes its health; a PATCH with a tag read before that delivery is made, one with a tag from before a change of its settings is 412', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const receiver = await webhookReceiver(t)
      const { id } = await registered(api, { url: receiver.url, events: ['pet.created'] })
      const before = await api.call('GET', `/v1/webhook-endpoints/${id}`)
      const etag = String(before.headers.etag)

      const unchanged = await api.call('GET', `/v1/webhook-endpoints/${id}`, undefined, { 'if-none-match': etag })
      await recordPet(api, 'Rex')
      await receiver.waitFor(1)
      await eventually(async () => (await api.call('GET', `/v1/webhook-endpoints/${id}`)).json().health.lastSuccessAt !== undefined, 'the delivery is recorded')
      const afterDelivery = await api.call('GET', `/v1/webhook-endpoints/${id}`, undefined, { 'if-none-match': etag })
      const renamed = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'storefront' }, { 'if-match': etag })
      const readAfterRename = await api.call('GET', `/v1/webhook-endpoints/${id}`)
      const stale = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'again' }, { 'if-match': etag })
      const weak = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'again' }, { 'if-match': `W/${String(renamed.headers.etag)}` })
      const current = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'again' }, { 'if-match': String(renamed.headers.etag) })

      assert.equal(unchanged.statusCode, 304)
      assert.equal(unchanged.body, '')
      assert.equal(afterDelivery.statusCode, 200, 'a 304 although the health changed')
      assert.notEqual(afterDelivery.headers.etag, etag)
      assert.equal(String(afterDelivery.headers.etag).slice(0, 28), etag.slice(0, 28), 'the settings\' part is the same')
      assert.equal(renamed.statusCode, 200, `a delivery made the tag read before it fail: ${renamed.body}`)
      assert.equal(renamed.json().name, 'storefront')
      assert.equal(renamed.headers.etag, readAfterRename.headers.etag, 'the change answers the tag a read gives')
      assertError(stale, 'precondition_failed', `webhook endpoint ${id}`)
      assertError(weak, 'precondition_failed')
      assert.equal(current.statusCode, 200)
      assert.equal(current.json().name, 'again')
    })

    test('When a PATCH changes the settings, then the endpoint has them and keeps its secret; a new URL is checked again and an event type outside the registry refused, both naming the field', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const receiver = await webhookReceiver(t)
      const moved = await webhookReceiver(t)
      const { id, secret } = await registered(api, { url: receiver.url, events: ['pet.created'], description: 'old', rateLimit: 5 })

      const changed = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { url: moved.url, events: ['pet.updated', 'pet.created'], name: 'shop', description: null, rateLimit: null })
      const refusedUrl = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { url: 'ftp://93.184.215.14/hooks' })
      const refusedType = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { events: ['pet.deleted'] })
      await recordPet(api, 'Rex')
      const [request] = await moved.waitFor(1)

      assert.equal(changed.statusCode, 200, changed.body)
      assert.deepEqual({ ...changed.json<Record<string, unknown>>(), createdAt: undefined, health: undefined }, {
        id, url: moved.url, events: ['pet.created', 'pet.updated'], name: 'shop', disabled: false, signing: 'hmac-sha256', createdAt: undefined, health: undefined
      })
      assertError(refusedUrl, 'invalid_request', 'body: field "url" is refused: the URL must be https:')
      assertError(refusedType, 'invalid_request', 'body: field "events.0" must be one of "pet.created", "pet.updated", "order.created", "order.updated"')
      assert.equal(request?.headers['webhook-id'], String((await api.app.eventStore.listEvents({ afterId: 0, limit: 10 })).events[0]?.id))
      assert.equal(receiver.received.length, 0, 'the old URL was sent to after the change')
      assert.ok(typeof secret === 'string' && String(request?.headers['webhook-signature']).startsWith('v1,'))
    })

    test('When an endpoint is disabled by a PATCH, then it receives nothing; enabled again, it gets what it missed, in event-id order', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const receiver = await webhookReceiver(t)
      const { id } = await registered(api, { url: receiver.url, events: ['pet.created'] })
      const first = await recordPet(api, 'Before')
      await receiver.waitFor(1)

      const disabled = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: true })
      const missed = [await recordPet(api, 'A'), await recordPet(api, 'B'), await recordPet(api, 'C')]
      await new Promise((resolve) => setTimeout(resolve, 700))
      const whileDisabled = receiver.received.length
      const listed = (await api.call('GET', `/v1/webhook-endpoints/${id}`)).json()
      const enabled = await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: false })
      const requests = await receiver.waitFor(4)

      assert.equal(disabled.statusCode, 200)
      assert.equal(disabled.json().disabled, true)
      assert.match(disabled.json().disabledAt, /^\d{4}-/)
      assert.equal(whileDisabled, 1, 'a disabled endpoint was sent to')
      assert.equal(listed.health.waiting, 3, 'what it missed is counted as waiting')
      assert.equal(enabled.json().disabled, false)
      assert.equal(enabled.json().disabledAt, undefined)
      assert.deepEqual(webhookIds(requests), [first, ...missed])
    })

    test('When an endpoint is deleted, then 204, nothing more is sent to it, and a repeat is 404 webhook_endpoint_not_found', async (t) => {
      const api = await buildWebhookApi(t, { store, env: ENV })
      const receiver = await webhookReceiver(t)
      const kept = await webhookReceiver(t)
      const { id } = await registered(api, { url: receiver.url, events: ['pet.created'] })
      await registered(api, { url: kept.url, events: ['pet.created'] })
      await recordPet(api, 'Before')
      await receiver.waitFor(1)

      const deleted = await api.call('DELETE', `/v1/webhook-endpoints/${id}`)
      await recordPet(api, 'After')
      await kept.waitFor(2)
      await new Promise((resolve) => setTimeout(resolve, 300))

      assert.equal(deleted.statusCode, 204)
      assert.equal(deleted.body, '')
      assert.equal(receiver.received.length, 1, 'a deleted endpoint was sent to')
      assertError(await api.call('DELETE', `/v1/webhook-endpoints/${id}`), 'webhook_endpoint_not_found', `No webhook endpoint has id ${id}.`)
      assertError(await api.call('GET', `/v1/webhook-endpoints/${id}`), 'webhook_endpoint_not_found')
    })
  })
}
