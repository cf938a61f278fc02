import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { WEBHOOK_ENDPOINTS_MAX } from '../../src/capabilities/webhooks/endpoint-limits.js'
import type { ErrorCode } from '../../src/infra/errors/catalogue.js'
import { assertError } from '../helpers/assertions.js'
import { testStores } from '../helpers/build-app.js'
import { buildWebhookApi, recordPet, registered, type WebhookApi } from '../helpers/webhook-api.js'

// Every bad request to /v1/webhook-endpoints gets a 4xx Error that names what is wrong; none a 500

type Case = [what: string, method: 'GET' | 'POST' | 'PATCH', url: string, body: unknown, code: ErrorCode, names: string, status?: number]

async function expectRefusals (api: WebhookApi, cases: readonly Case[]): Promise<void> {
  for (const [what, method, url, body, code, names, status] of cases) {
    const res = await api.call(method, url, body)
    assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body}`)
    assertError(res, code, names, status)
  }
}

const DAY_MS = 86_400_000

for (const store of testStores()) {
  describe(`bad input to /v1/webhook-endpoints (${store})`, () => {
    test('When a registration is malformed, then 400 names the field: the URL, the events (none, unknown, repeated), the rate limit (0, negative, absurd, fractional, text), the signing, the name, the description, an unknown field', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const url = 'https://93.184.215.14/hooks'
      const events = ['pet.created']
      const post = (what: string, body: unknown, names: string, code: ErrorCode = 'invalid_request'): Case => [what, 'POST', '/v1/webhook-endpoints', body, code, names]
      await expectRefusals(api, [
        post('no url', { events }, 'body: field "url" is required'),
        post('no events', { url }, 'body: field "events" is required'),
        post('empty events', { url, events: [] }, 'body: field "events"'),
        post('an unknown event type', { url, events: ['pet.deleted'] }, 'body: field "events.0" must be one of "pet.created", "pet.updated", "order.created", "order.updated"'),
        post('an event type twice', { url, events: ['pet.created', 'pet.created'] }, 'body: field "events"'),
        post('events not a list', { url, events: 'pet.created' }, 'body: field "events"'),
        post('rate limit 0', { url, events, rateLimit: 0 }, 'body: field "rateLimit" must be >= 1'),
        post('a negative rate limit', { url, events, rateLimit: -5 }, 'body: field "rateLimit" must be >= 1'),
        post('an absurd rate limit', { url, events, rateLimit: 1e12 }, 'body: field "rateLimit" must be <= 1000'),
        post('a fractional rate limit', { url, events, rateLimit: 2.5 }, 'body: field "rateLimit" must be an integer'),
        post('a rate limit as text', { url, events, rateLimit: '5' }, 'body: field "rateLimit" must be an integer'),
        post('an unknown signing', { url, events, signing: 'rsa' }, 'body: field "signing" must be one of "hmac-sha256", "ed25519"'),
        post('an empty name', { url, events, name: '' }, 'body: field "name"'),
        post('a blank name', { url, events, name: '   ' }, 'body: field "name" must have 1 to 100 characters'),
        post('a name too long', { url, events, name: 'n'.repeat(101) }, 'body: field "name"'),
        post('a description too long', { url, events, description: 'd'.repeat(501) }, 'body: field "description"'),
        post('a description with a control character', { url, events, description: 'a\u0007b' }, 'body: field "description" must have at most 500 characters and no control characters'),
        post('not a URL', { url: 'not a url', events }, 'body: field "url" is refused: "not a url" is not an absolute URL'),
        post('a URL with credentials', { url: 'https://user:pw@93.184.215.14/hooks', events }, 'body: field "url" is refused: the URL must not carry credentials'),
        post('a URL too long', { url: `https://93.184.215.14/${'a'.repeat(2000)}`, events }, 'body: field "url"'),
        post('an unknown field', { url, events, secret: generateWebhookSecret() }, 'body: field "secret" is not allowed'),
        post('not JSON', '{"url":', 'not valid JSON', 'malformed_json')
      ])
      assert.deepEqual(await api.app.webhookStore.listWebhookEndpoints(), [])
    })

    test('When the address rules are not relaxed, then a private, loopback, link-local or metadata address is refused at registration and in a change, naming url', async (t) => {
      const api = await buildWebhookApi(t, { store, env: { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } })
      const { id } = await registered(api, { url: 'https://93.184.215.14/hooks', events: ['pet.created'] })
      const refused: Array<[string, string]> = [
        ['https://10.1.2.3/hooks', '10.1.2.3 is in 10.0.0.0/8'],
        ['https://127.0.0.1/hooks', '127.0.0.1 is in 127.0.0.0/8, Loopback'],
        ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
        ['https://[::1]/hooks', '::1'],
        ['https://[fd00:ec2::254]/hooks', 'fd00:ec2::254'],
        ['http://93.184.215.14/hooks', 'must be https:']
      ]
      for (const [url, why] of refused) {
        assertError(await api.call('POST', '/v1/webhook-endpoints', { url, events: ['pet.created'] }), 'invalid_request', 'body: field "url" is refused: ')
        assertError(await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { url }), 'invalid_request', why)
      }
      assert.deepEqual((await api.app.webhookStore.listWebhookEndpoints()).map(({ url }) => url), ['https://93.184.215.14/hooks'])
    })

    test('When a change is malformed, then 400 names the field; an id no endpoint has is 404, one that is not an id 400', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const { id } = await registered(api, { url: 'https://93.184.215.14/hooks', events: ['pet.created'] })
      const patch = (what: string, body: unknown, names: string, code: ErrorCode = 'invalid_request', url = `/v1/webhook-endpoints/${id}`): Case => [what, 'PATCH', url, body, code, names]
      await expectRefusals(api, [
        patch('empty events', { events: [] }, 'body: field "events"'),
        patch('rate limit 0', { rateLimit: 0 }, 'body: field "rateLimit" must be >= 1'),
        patch('an absurd rate limit', { rateLimit: 100_000 }, 'body: field "rateLimit" must be <= 1000'),
        patch('a null name', { name: null }, 'body: field "name" must be a string, not null'),
        patch('a null url', { url: null }, 'body: field "url" must be a string, not null'),
        patch('a change of signing', { signing: 'ed25519' }, 'body: field "signing" is not allowed'),
        patch('disabled as text', { disabled: 'yes' }, 'body: field "disabled" must be a boolean'),
        patch('an unknown id', { name: 'x' }, `No webhook endpoint has id ${id + 1}.`, 'webhook_endpoint_not_found', `/v1/webhook-endpoints/${id + 1}`),
        patch('an id beyond any', { name: 'x' }, 'No webhook endpoint has id 9223372036854775807.', 'webhook_endpoint_not_found', '/v1/webhook-endpoints/9223372036854775807'),
        patch('id 0', { name: 'x' }, 'path parameter "endpointId" must be >= 1', 'invalid_request', '/v1/webhook-endpoints/0'),
        patch('an id that is not a number', { name: 'x' }, 'path parameter "endpointId"', 'invalid_request', '/v1/webhook-endpoints/abc')
      ])
      assertError(await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'x' }, { 'if-match': 'not a tag' }), 'invalid_request', 'header "if-match"')
    })

    test('When a resend names no event, an unknown one, one beyond any id, one of a type not received, or asks a disabled or deleted endpoint, then it is refused with its own code and nothing is queued', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const { id } = await registered(api, { url: 'https://93.184.215.14/hooks', events: ['pet.updated'], disabled: true })
      const petEvent = await recordPet(api, 'Rex')
      const resend = (what: string, body: unknown, code: ErrorCode, names: string, status?: number, endpoint = id): Case =>
        [what, 'POST', `/v1/webhook-endpoints/${endpoint}/resend`, body, code, names, ...(status === undefined ? [] : [status])] as Case
      await expectRefusals(api, [
        resend('no eventId', {}, 'invalid_request', 'body: field "eventId" is required'),
        resend('eventId as text', { eventId: 'x' }, 'invalid_request', 'body: field "eventId"'),
        resend('eventId 0', { eventId: 0 }, 'invalid_request', 'body: field "eventId" must be >= 1'),
        resend('a disabled endpoint', { eventId: petEvent }, 'webhook_endpoint_disabled', `Webhook endpoint ${id} is disabled`)
      ])
      assert.equal((await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: false })).statusCode, 200)
      await expectRefusals(api, [
        resend('an event no one recorded', { eventId: petEvent + 100 }, 'event_not_found', `body: field "eventId": no event has id ${petEvent + 100}`, 422),
        resend('an event id beyond any', { eventId: 9223372036854775807n.toString() }, 'invalid_request', 'body: field "eventId"'),
        resend('a type the endpoint does not receive', { eventId: petEvent }, 'invalid_request', `body: field "eventId": event ${petEvent} is a pet.created, which webhook endpoint ${id} does not receive (pet.updated)`),
        resend('an unknown endpoint', { eventId: petEvent }, 'webhook_endpoint_not_found', `No webhook endpoint has id ${id + 1}.`, undefined, id + 1)
      ])
      const beyond = await api.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${id}/resend`, headers: { ...api.admin, 'content-type': 'application/json' }, payload: '{"eventId":9223372036854775807}' })
      assertError(beyond, 'event_not_found', 'no event has id 9223372036854775807', 422)
      assert.equal((await api.call('GET', `/v1/webhook-endpoints/${id}`)).json().health.waiting, 0)
      assert.equal((await api.call('DELETE', `/v1/webhook-endpoints/${id}`)).statusCode, 204)
      await expectRefusals(api, [resend('a deleted endpoint', { eventId: petEvent }, 'webhook_endpoint_not_found', `No webhook endpoint has id ${id}.`)])
    })

    test('When a recovery\'s window is malformed, in the future, older than retention or ends before it starts, or the endpoint is disabled, then it is refused naming the field or with its code', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const { id } = await registered(api, { url: 'https://93.184.215.14/hooks', events: ['pet.created'] })
      const now = Date.now()
      const iso = (ms: number): string => new Date(ms).toISOString()
      const recover = (what: string, body: unknown, code: ErrorCode, names: string): Case => [what, 'POST', `/v1/webhook-endpoints/${id}/recover`, body, code, names]
      await expectRefusals(api, [
        recover('no since', {}, 'invalid_request', 'body: field "since" is required'),
        recover('since not a date-time', { since: 'yesterday' }, 'invalid_request', 'body: field "since" must be an RFC 3339 date-time'),
        recover('since without a time zone', { since: '2026-11-25T00:00:00' }, 'invalid_request', 'body: field "since"'),
        recover('since not a date at all', { since: '2026-13-45T99:00:00Z' }, 'invalid_request', 'body: field "since" must be an RFC 3339 date-time'),
        recover('since in the future', { since: iso(now + DAY_MS) }, 'invalid_request', 'body: field "since" is in the future'),
        recover('since older than retention', { since: iso(now - 31 * DAY_MS) }, 'invalid_request', 'body: field "since" must be within the last 30 days'),
        recover('until before since', { since: iso(now - DAY_MS), until: iso(now - 2 * DAY_MS) }, 'invalid_request', 'body: field "until" must be after since'),
        recover('an unknown field', { since: iso(now - DAY_MS), all: true }, 'invalid_request', 'body: field "all" is not allowed')
      ])
      assert.equal((await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: true })).statusCode, 200)
      await expectRefusals(api, [recover('a disabled endpoint', { since: iso(now - DAY_MS) }, 'webhook_endpoint_disabled', `Webhook endpoint ${id} is disabled`)])
      assert.equal((await api.call('DELETE', `/v1/webhook-endpoints/${id}`)).statusCode, 204)
      assertError(await api.call('POST', `/v1/webhook-endpoints/${id}/recover`, { since: iso(now - DAY_MS) }), 'webhook_endpoint_not_found')
    })

    test('When the attempts are asked for with a bad filter, limit or cursor, or a cursor of another endpoint, then 400 names the parameter', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const { id } = await registered(api, { url: 'https://93.184.215.14/a', events: ['pet.created'] })
      const other = await registered(api, { url: 'https://93.184.215.14/b', events: ['pet.created'] })
      const cursorOfOther = api.app.webhookAttemptList.cursor(5, { endpoint: String(other.id) })
      await expectRefusals(api, [
        ['a bad status', 'GET', `/v1/webhook-endpoints/${id}/attempts?status=bogus`, undefined, 'invalid_request', 'query parameter "status"'],
        ['limit 0', 'GET', `/v1/webhook-endpoints/${id}/attempts?limit=0`, undefined, 'invalid_request', 'query parameter "limit" must be >= 1'],
        ['a garbled cursor', 'GET', `/v1/webhook-endpoints/${id}/attempts?cursor=abc`, undefined, 'invalid_cursor', 'query parameter "cursor"'],
        ['a cursor of another endpoint', 'GET', `/v1/webhook-endpoints/${id}/attempts?cursor=${cursorOfOther}`, undefined, 'invalid_cursor', 'query parameter "cursor" belongs to a list with other filters'],
        ['an unknown endpoint', 'GET', `/v1/webhook-endpoints/${other.id + 1}/attempts`, undefined, 'webhook_endpoint_not_found', `No webhook endpoint has id ${other.id + 1}.`]
      ])
    })

    test(`When ${WEBHOOK_ENDPOINTS_MAX} endpoints are registered, then one more is 409 webhook_endpoint_limit_reached and nothing is added; after a delete one fits again`, async (t) => {
      const api = await buildWebhookApi(t, { store })
      for (let i = 0; i < WEBHOOK_ENDPOINTS_MAX; i++) {
        await api.app.webhookStore.createWebhookEndpoint({ name: `hook ${i}`, url: `https://93.184.215.14/${i}`, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
      }

      const refused = await api.call('POST', '/v1/webhook-endpoints', { url: 'https://93.184.215.14/one-more', events: ['pet.created'] })
      assert.equal((await api.call('DELETE', '/v1/webhook-endpoints/1')).statusCode, 204)
      const fits = await api.call('POST', '/v1/webhook-endpoints', { url: 'https://93.184.215.14/one-more', events: ['pet.created'] })

      assertError(refused, 'webhook_endpoint_limit_reached', `${WEBHOOK_ENDPOINTS_MAX} webhook endpoints are registered, the most there may be`)
      assert.equal(fits.statusCode, 201, fits.body)
      assert.equal((await api.app.webhookStore.listWebhookEndpoints()).length, WEBHOOK_ENDPOINTS_MAX)
    })
  })
}
