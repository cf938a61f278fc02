import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { STREAM_CAP_RETRY_AFTER_SECONDS } from '../../src/capabilities/events/stream/stream-slots.js'
import { STREAM_RETRY_MS } from '../../src/capabilities/events/stream/sse-format.js'
import { MAX_EVENT_ID } from '../../src/infra/schemas/event-envelope.js'
import { buildTestApp, createdPet, patchPet, testStores, type TestApp } from '../helpers/build-app.js'
import { mockDate } from '../helpers/clock.js'
import { assertMessagesMatchPage, openStream, type StreamClient } from '../helpers/event-stream-client.js'
import { within } from '../helpers/processes.js'
import { bigOrder, insertCopies } from '../helpers/stream-backlog.js'

const DAY_MS = 86_400_000
// copies of that order behind a stream that retention passes: four pages of its own reads, and twice the tail's recent events
const BEHIND_COPIES = 2000

/** The app listening on a port of its own: streams are read over a real socket. */
async function listening (api: TestApp): Promise<string> {
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(api.app.server.address() as { port: number }).port}`
}

/** Waits (polling, at most 10 s) until `predicate` holds. */
async function eventually (predicate: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !predicate(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    assert.ok(Date.now() < deadline, what)
  }
}

/** The parts of the served OpenAPI document this file reads. */
interface OpenApiDocument {
  paths: Record<string, { get?: { operationId: string, parameters?: Array<{ in: string, name: string, description?: string, schema: { maximum?: number } }> } }>
}

/** Settles with how `stream` ended, failing within `ms` (naming what arrived) when it does not end: never the run's 5-minute limit. */
async function endOf (stream: StreamClient, what: string, ms = 20_000): Promise<'clean' | 'cut'> {
  const last = (): string => JSON.stringify(stream.messages.at(-1) ?? null).slice(0, 200)
  return await within(ms, `${what} did not end: ${stream.messages.length} messages arrived, the last ${last()}`, stream.ended)
}

/** The feed as one JSON page (every event so far), as its body's text. */
async function pageBody (api: TestApp, query = ''): Promise<string> {
  const res = await api.app.inject({ method: 'GET', url: `/v1/events?limit=100${query}`, headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.body
}

/** A metric's value as the app's registry reads it now. */
async function metricValue (api: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await api.app.metrics.registry.getMetricsAsJSON()).find((each) => each.name === name)
  const sample = (metric?.values ?? []).find((value) => Object.entries(labels).every(([label, wanted]) => String(value.labels[label]) === wanted))
  return Number(sample?.value ?? NaN)
}

for (const store of testStores()) {
  describe(`listEvents as a stream of Server-Sent Events (${store})`, () => {
    test('When a consumer follows the stream, then it opens with retry and gets every event, old then new, in order, each message\'s data exactly the page\'s item', async (t) => {
      const api = await buildTestApp(t, { store })
      const base = await listening(api)
      const first = await createdPet(api, { name: 'Rex', categoryId: 7 })
      assert.equal((await patchPet(api, first.id, { status: 'pending' })).statusCode, 200)

      const stream = await openStream(base, '/v1/events', api.auth)
      assert.equal(stream.status, 200)
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/)
      await stream.waitForMessages(2)
      for (let i = 0; i < 3; i++) await createdPet(api, { name: `Pet ${i}`, categoryId: i })
      await stream.waitForMessages(5)

      assert.deepEqual(stream.retries, [String(STREAM_RETRY_MS)])
      assert.deepEqual(stream.messages.map((message) => message.event), ['pet.created', 'pet.updated', 'pet.created', 'pet.created', 'pet.created'])
      assertMessagesMatchPage(stream.messages, await pageBody(api))
      assert.equal(await metricValue(api, 'petstore_event_streams_open'), 1)
      assert.equal(await metricValue(api, 'petstore_event_stream_messages_total'), 5)
      stream.close()
    })

    test('When the stream is filtered by type, then only those types come, old and new, and a page filtered alike holds the same', async (t) => {
      const api = await buildTestApp(t, { store })
      const base = await listening(api)
      const pet = await createdPet(api, { name: 'Rex', categoryId: 7 })
      assert.equal((await patchPet(api, pet.id, { status: 'pending' })).statusCode, 200)

      const stream = await openStream(base, '/v1/events?type=pet.updated&type=order.created', api.auth)
      await stream.waitForMessages(1)
      await createdPet(api, { name: 'Tom', categoryId: 1 })
      assert.equal((await patchPet(api, pet.id, { status: 'sold' })).statusCode, 200)
      await stream.waitForMessages(2)

      assert.deepEqual(stream.messages.map((message) => message.event), ['pet.updated', 'pet.updated'])
      assertMessagesMatchPage(stream.messages, await pageBody(api, '&type=pet.updated&type=order.created'))
      stream.close()
    })

    test('When Last-Event-ID is sent, then the stream resumes after it, even beside an after; a bad one is 400 naming the header', async (t) => {
      const api = await buildTestApp(t, { store })
      const base = await listening(api)
      for (let i = 0; i < 4; i++) await createdPet(api, { name: `Pet ${i}`, categoryId: i })
      const ids = (JSON.parse(await pageBody(api)) as Array<{ id: number }>).map((event) => event.id)

      const resumed = await openStream(base, `/v1/events?after=${ids[0]}`, { ...api.auth, 'last-event-id': String(ids[2]) })
      await resumed.waitForMessages(1)
      const withAfter = await openStream(base, `/v1/events?after=${ids[2]}`, api.auth)
      await withAfter.waitForMessages(1)
      for (const bad of ['abc', '-1', '1.5', '9007199254740992']) {
        const refused = await openStream(base, '/v1/events', { ...api.auth, 'last-event-id': bad })
        assert.equal(refused.status, 400, bad)
        await endOf(refused, `the 400 to Last-Event-ID ${bad}`)
        assert.match(refused.body(), /header \\?"last-event-id\\?"/)
      }
      await createdPet(api, { name: 'Next', categoryId: 9 })
      await resumed.waitForMessages(2)

      assert.deepEqual(resumed.messages.map((message) => Number(message.id)), [ids[3], ids[3] as number + 1])
      assert.deepEqual(withAfter.messages.slice(0, 1).map((message) => Number(message.id)), [ids[3]])
      resumed.close()
      withAfter.close()
    })

    test('When a position beyond the largest event id (2^53−1) is asked for, as after or as Last-Event-ID, then it is 400 naming it and the bound; the largest itself is a position like any; the document states the bound for both', async (t) => {
      const api = await buildTestApp(t, { store })
      const base = await listening(api)
      const beyond = String(MAX_EVENT_ID + 1)

      const page = await api.app.inject({ method: 'GET', url: `/v1/events?after=${beyond}`, headers: api.auth })
      const stream = await openStream(base, '/v1/events', { ...api.auth, 'last-event-id': beyond })
      await endOf(stream, 'the 400 to a Last-Event-ID beyond the bound')
      const largest = await api.app.inject({ method: 'GET', url: `/v1/events?after=${MAX_EVENT_ID}`, headers: api.auth })
      const document = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<OpenApiDocument>()

      assert.equal(page.statusCode, 400)
      assert.match(page.body, /after\\?" must be <= 9007199254740991/)
      assert.equal(stream.status, 400)
      assert.match(stream.body(), /last-event-id\\?" must be <= 9007199254740991/)
      assert.equal(largest.statusCode, 200, largest.body)
      assert.equal(largest.body, '[]')
      const parameters = Object.values(document.paths).find((path) => path.get?.operationId === 'listEvents')?.get?.parameters ?? []
      for (const [where, name] of [['query', 'after'], ['header', 'last-event-id']] as const) {
        const parameter = parameters.find((each) => each.in === where && each.name.toLowerCase() === name)
        assert.equal(parameter?.schema.maximum, MAX_EVENT_ID, `${name}'s schema is bounded`)
        assert.match(parameter?.description ?? '', /at most 9007199254740991 \(2\^53−1/, `${name}'s description states the bound`)
      }
    })

    test('When retention has passed the position, then the answer is the feed\'s 410 as JSON, and no stream starts', async (t) => {
      mockDate(t)
      const api = await buildTestApp(t, { store, env: { EVENT_RETENTION_DAYS: '1' } })
      const base = await listening(api)
      await createdPet(api, { name: 'Old', categoryId: 1 })
      t.mock.timers.tick(2 * DAY_MS)
      const fresh = await createdPet(api, { name: 'Fresh', categoryId: 2 })
      assert.equal(await api.app.eventRetention.purge(), 1)
      const json = await api.app.inject({ method: 'GET', url: '/v1/events?after=0', headers: api.auth })

      for (const [path, headers] of [['/v1/events', { 'last-event-id': '0' }], ['/v1/events?after=0', {}]] as const) {
        const stream = await openStream(base, path, { ...api.auth, ...headers })
        assert.equal(await endOf(stream, `the answer to ${path}`), 'clean')
        assert.equal(stream.status, 410)
        assert.match(String(stream.headers['content-type']), /^application\/json/)
        assert.equal(stream.body(), json.body)
        assert.match(String(stream.headers.link), /after=\d+&limit=20>; rel="next"$/)
      }
      const fromStart = await openStream(base, '/v1/events', api.auth)
      await fromStart.waitForMessages(1)
      assert.equal(JSON.parse(fromStart.messages[0]?.data ?? '').data.pet.name, fresh.name)
      fromStart.close()
    })

    // alone, the stream behind moves the idle tail to its position and the tail's read meets the gap; beside a live
    // stream, the one behind is too far behind to join the tail and meets it in a page read of its own
    for (const beside of ['alone', 'beside a live stream'] as const) {
      test(`When retention deletes events past the position of a stream that is catching up (${beside}), then its last message is an error carrying the 410 events_expired, it ends cleanly, and resuming with Last-Event-ID is that 410`, async (t) => {
        mockDate(t)
        // a backlog bound it never reaches and a heartbeat it never waits for: the stream is held behind by its consumer alone, never cut
        const api = await buildTestApp(t, { store, env: { EVENT_RETENTION_DAYS: '1', EVENT_STREAM_MAX_BACKLOG_KIB: '1048576', EVENT_STREAM_HEARTBEAT_SECONDS: '300' } })
        const base = await listening(api)
        await bigOrder(api)
        const reader = beside === 'alone' ? undefined : await openStream(base, '/v1/events', api.auth)
        for (let batch = 0; batch < BEHIND_COPIES / 100; batch++) await insertCopies(api, 100)
        await reader?.waitForMessages(BEHIND_COPIES + 3, 60_000)
        // its first page (500 events of about 10 KiB) is more than the socket's buffers take from a consumer that reads nothing:
        // the stream waits for its consumer there, and reads its next page only once the consumer has taken it
        const behind = await openStream(base, '/v1/events', api.auth)
        behind.stopReading()
        t.mock.timers.tick(2 * DAY_MS)
        await createdPet(api, { name: 'Fresh', categoryId: 2 })
        assert.ok(await api.app.eventRetention.purge() >= BEHIND_COPIES, 'retention deleted every event but the fresh one')

        behind.resumeReading()
        assert.equal(await endOf(behind, 'the stream retention passed', 15_000), 'clean')
        const last = behind.messages.at(-1)
        const events = behind.messages.slice(0, -1)
        assert.equal(last?.event, 'error', 'the last message says why the stream ended')
        assert.equal(last?.id, '', 'and carries no id: Last-Event-ID stays the last event received')
        const error = JSON.parse(last?.data ?? '') as { code: string, status: number, message: string }
        assert.deepEqual([error.code, error.status], ['events_expired', 410])
        const ids = events.map((message) => Number(message.id))
        assert.ok(ids.length > 0 && ids.length <= BEHIND_COPIES, `the stream was behind: ${ids.length} events before the error`)
        assert.ok(ids.every((id, i) => i === 0 || id === (ids[i - 1] as number) + 1), 'no event was skipped before the error')
        assert.equal(await metricValue(api, 'petstore_event_streams_ended_total', { reason: 'expired' }), 1)

        const resumed = await openStream(base, '/v1/events', { ...api.auth, 'last-event-id': String(ids.at(-1)) })
        assert.equal(await endOf(resumed, 'the resumption after the gap'), 'clean')
        assert.equal(resumed.status, 410)
        assert.match(String(resumed.headers['content-type']), /^application\/json/)
        assert.equal(resumed.body(), last?.data, 'the stream\'s last message is the 410 its resumption answers, byte for byte')
        if (reader !== undefined) {
          await reader.waitUntil(() => reader.messages.at(-1)?.event === 'pet.created', 'the live stream got the fresh event')
          assert.equal(reader.messages.length, BEHIND_COPIES + 4, 'the live stream, never behind, got every event and no error')
          reader.close()
        }
      })
    }

    test('When a key is at EVENT_STREAM_MAX_PER_KEY or the instance at EVENT_STREAM_MAX_PER_INSTANCE, then 429 or 503 with Retry-After; streams below the caps go through, and a slot frees when a stream ends', async (t) => {
      const api = await buildTestApp(t, { store, env: { EVENT_STREAM_MAX_PER_KEY: '2', EVENT_STREAM_MAX_PER_INSTANCE: '3' } })
      const base = await listening(api)
      const other = generateApiKey()
      await api.app.keyStore.createApiKey('other', hashApiKey(other), 'read')
      const otherAuth = { authorization: `Bearer ${other}` }

      const [a1, a2] = [await openStream(base, '/v1/events', api.auth), await openStream(base, '/v1/events', api.auth)]
      const overKey = await openStream(base, '/v1/events', api.auth)
      const b1 = await openStream(base, '/v1/events', otherAuth)
      const overInstance = await openStream(base, '/v1/events', otherAuth)

      assert.deepEqual([a1.status, a2.status, b1.status], [200, 200, 200], 'streams below both caps go through (a read key\'s too)')
      assert.equal(overKey.status, 429)
      assert.equal(overKey.headers['retry-after'], String(STREAM_CAP_RETRY_AFTER_SECONDS))
      assert.match(overKey.body(), /rate_limited[\s\S]*EVENT_STREAM_MAX_PER_KEY/)
      assert.equal(overInstance.status, 503)
      assert.equal(overInstance.headers['retry-after'], '1')
      await endOf(overInstance, 'the 503 past the instance\'s cap')
      assert.match(overInstance.body(), /service_unavailable[\s\S]*EVENT_STREAM_MAX_PER_INSTANCE/)
      const page = await api.app.inject({ method: 'GET', url: '/v1/events', headers: api.auth })
      assert.equal(page.statusCode, 200, 'the caps are on streams: pages are served')
      assert.equal(await metricValue(api, 'petstore_event_streams_refused_total', { cap: 'per_key' }), 1)
      assert.equal(await metricValue(api, 'petstore_event_streams_refused_total', { cap: 'per_instance' }), 1)

      a1.close()
      await endOf(a1, 'the closed stream')
      await eventually(() => api.app.eventStreams.open === 2, 'the closed stream gives its slot back')
      const again = await openStream(base, '/v1/events', api.auth)
      assert.equal(again.status, 200)
      for (const stream of [a2, b1, again]) stream.close()
    })

    test('When a stream is idle, then a heartbeat comment comes every EVENT_STREAM_HEARTBEAT_SECONDS; the rate limit counts the stream once, at its start', async (t) => {
      const api = await buildTestApp(t, { store, env: { EVENT_STREAM_HEARTBEAT_SECONDS: '1', RATE_LIMIT_MAX: '6' } })
      const base = await listening(api)
      const stream = await openStream(base, '/v1/events', api.auth)
      for (let i = 0; i < 3; i++) await createdPet(api, { name: `Pet ${i}`, categoryId: i })
      await stream.waitForMessages(3)
      await stream.waitUntil(() => stream.comments.filter((comment) => comment === 'heartbeat').length >= 2, 'two heartbeats')

      // the stream, three creates, and this page: five of the six requests, whatever the stream sent
      const page = await api.app.inject({ method: 'GET', url: '/v1/events', headers: api.auth })
      assert.match(String(page.headers.ratelimit), /r=1;/)
      stream.close()
    })

    test('When the app closes, then every stream ends cleanly (a stream catching up too), and the close is not held by them', async (t) => {
      const api = await buildTestApp(t, { store })
      const base = await listening(api)
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      const streams = [await openStream(base, '/v1/events', api.auth), await openStream(base, '/v1/events?type=pet.updated', api.auth)]
      await streams[0]?.waitForMessages(1)

      await api.app.close()

      assert.deepEqual(await Promise.all(streams.map(async (stream) => await endOf(stream, 'a stream at close'))), ['clean', 'clean'])
      assert.equal(await metricValue(api, 'petstore_event_streams_ended_total', { reason: 'shutdown' }), 2)
      assert.equal(api.app.eventStreams.open, 0)
    })

    test('When Accept does not name text/event-stream first, then the answer is the JSON page, as before', async (t) => {
      const api = await buildTestApp(t, { store })
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      for (const accept of ['*/*', 'application/json', 'text/*', 'application/json, text/event-stream;q=0.5', 'text/event-stream;q=0']) {
        const res = await api.app.inject({ method: 'GET', url: '/v1/events', headers: { ...api.auth, accept } })
        assert.equal(res.statusCode, 200, accept)
        assert.match(String(res.headers['content-type']), /^application\/json/, accept)
      }
      const head = await api.app.inject({ method: 'HEAD', url: '/v1/events', headers: { ...api.auth, accept: 'text/event-stream' } })
      assert.equal(head.statusCode, 200)
      assert.match(String(head.headers['content-type']), /^application\/json/)
    })
  })
}
