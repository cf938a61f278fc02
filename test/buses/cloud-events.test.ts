import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { deploymentIdOf } from '../../src/infra/database/deployment-id.js'
import { parseJson, stringifyJson } from '../../src/infra/json/exact-json.js'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { natsReader, rabbitMqReader, type BusReader, type ReceivedMessage } from '../helpers/buses.js'
import { nextLinkOf } from '../helpers/events.js'

// What a consumer of either bus gets: every event of the feed once, in id order, as a CloudEvent whose `data` is the feed's.

interface FeedEvent { id: number, type: string, occurredAt: string, data: Record<string, unknown> }

/** Every event of the feed, parsed exactly (int64 beyond 2^53 as bigints). */
async function exactFeed (api: TestApp): Promise<FeedEvent[]> {
  const events: FeedEvent[] = []
  let url = '/v1/events?limit=100'
  for (;;) {
    const res = await api.app.inject({ method: 'GET', url, headers: api.auth })
    assert.equal(res.statusCode, 200, res.body)
    const page = parseJson(res.body) as FeedEvent[]
    if (page.length === 0) return events
    events.push(...page)
    url = nextLinkOf(res)
  }
}

/** Creates `count` pets at once (one with an int64 category beyond 2^53), changes one, places an order, names a category whose id is negative. */
async function makeChanges (api: TestApp, count: number): Promise<void> {
  const headers = { ...api.auth, 'content-type': 'application/json' }
  const created = await Promise.all(Array.from({ length: count }, async (_, n) => await api.app.inject({
    method: 'POST', url: '/v1/pets', headers, payload: n === 0 ? '{"name":"Big","categoryId":9223372036854775807}' : JSON.stringify({ name: `pet-${n}`, categoryId: n })
  })))
  for (const res of created) assert.equal(res.statusCode, 201, res.body)
  const petId = (parseJson(created[1]?.body ?? '') as { id: number }).id
  const patched = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${petId}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"name":"renamed"}' })
  assert.equal(patched.statusCode, 200, patched.body)
  const order = await api.app.inject({ method: 'POST', url: '/v1/store/orders', headers, payload: JSON.stringify({ petId }) })
  assert.equal(order.statusCode, 201, order.body)
  const category = await api.app.inject({ method: 'PUT', url: '/v1/categories/-9223372036854775808', headers, payload: '{"name":"Smallest"}' })
  assert.equal(category.statusCode, 201, category.body)
}

/** The subject a CloudEvent carries: the pet's, the order's or the category's id. */
function subjectOf (event: FeedEvent): string {
  const entity = (event.data.pet ?? event.data.order ?? event.data.category) as { id: number | bigint }
  return String(entity.id)
}

function assertMessagesAreTheFeed (messages: readonly ReceivedMessage[], feed: readonly FeedEvent[], deploymentId: string, route: (type: string) => string): void {
  assert.deepEqual(messages.map(({ messageId }) => messageId), feed.map(({ id }) => `${deploymentId}:${id}`), 'every event once, in id order, its message id the deployment\'s')
  for (const [index, message] of messages.entries()) {
    const event = feed[index] as FeedEvent
    assert.equal(message.route, route(event.type))
    assert.equal(message.contentType, 'application/cloudevents+json')
    assert.deepEqual(message.cloudEvent, {
      specversion: '1.0',
      id: String(event.id),
      source: `urn:uuid:${deploymentId}`,
      type: event.type,
      time: event.occurredAt,
      subject: subjectOf(event),
      datacontenttype: 'application/json',
      data: event.data
    })
    // the data's bytes as the feed writes them, int64 digit for digit
    assert.ok(message.body.endsWith(`"data":${stringifyJson(event.data)}}`), message.body)
  }
  // concurrent creates take ids in commit order (on PostgreSQL not the order they were sent), so look the big one up by name
  const big = messages.find(({ body }) => body.includes('"name":"Big"'))
  assert.match(big?.body ?? '', /"categoryId":9223372036854775807,/)
}

async function publishedChanges (reader: BusReader, store: 'sqlite' | 'postgres', t: TestContext): Promise<{ feed: FeedEvent[], messages: ReceivedMessage[], deploymentId: string }> {
  const api = await buildTestApp(t, { store, env: { ...reader.env, PUBLIC_BASE_URL: 'https://api.petstore.test/v1' } })
  await makeChanges(api, 120)
  const feed = await exactFeed(api)
  assert.equal(feed.length, 124)
  await reader.waitFor(feed.length)
  // a later pass publishes nothing more (no event twice)
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  return { feed, messages: reader.received, deploymentId: await deploymentIdOf(api.app.database) }
}

for (const store of testStores()) {
  describe(`events on the buses (${store})`, { concurrency: true }, () => {
    test('When pets and an order change, then JetStream holds every event once, in id order, as a CloudEvent with the feed\'s data', async (t) => {
      const reader = await natsReader(t)
      const { feed, messages, deploymentId } = await publishedChanges(reader, store, t)
      assertMessagesAreTheFeed(messages, feed, deploymentId, (type) => `${reader.env.NATS_SUBJECT_PREFIX}.${type}`)
    })

    test('When pets and an order change, then a queue bound to the RabbitMQ exchange receives every event once, in id order, routed by type', async (t) => {
      const reader = await rabbitMqReader(t)
      const { feed, messages, deploymentId } = await publishedChanges(reader, store, t)
      assertMessagesAreTheFeed(messages, feed, deploymentId, (type) => type)
    })
  })
}
