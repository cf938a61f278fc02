import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { EVENTS_RECORDED_CHANNEL } from '../../src/infra/database/commit-signal.js'
import { watchRecordedEvents } from '../../src/infra/database/watch-recorded-events.js'
import type { EventType } from '../../src/capabilities/events/index.js'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, createdPet, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { execSql, withPostgres } from '../helpers/databases.js'
import { watchWrites } from '../helpers/store-writes.js'
import { webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '1000',
  RATE_LIMIT_MAX: '0'
}
// far beyond every bound below: what arrives in time was woken, not found by the poll
const NO_POLL = { ...ENV, WEBHOOK_POLL_INTERVAL_MS: '600000' }

/**
 * An app on a store whose endpoint (to `receiver`) exists before the app starts, so its first look finds
 * the endpoint and starts the dispatcher.
 */
async function appWithEndpoint (t: TestContext, store: StoreKind, receiver: WebhookReceiver, env: Record<string, string>,
  eventTypes: EventType[] = ['pet.created']): Promise<TestApp> {
  const setup = await buildTestApp(t, { store, env: ENV })
  await setup.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url: receiver.url, eventTypes, secret: generateWebhookSecret() }, new Date())
  await setup.app.close()
  return await buildTestApp(t, { store, databaseUrl: setup.databaseUrl, env })
}

/** How many passes of the delivery loop ended with `outcome`, as a scrape reads them. */
async function passes (api: TestApp, outcome: 'done' | 'more' | 'failed'): Promise<number> {
  const { values } = await api.app.metrics.backgroundPasses.get()
  return values.find((sample) => sample.labels.loop === 'webhook_delivery' && sample.labels.outcome === outcome)?.value ?? 0
}

/** A copy of the newest event, committed by a connection of its own (another process's writer); on PostgreSQL it notifies as the service's own writes do. */
async function recordEventElsewhere (api: TestApp, store: StoreKind): Promise<void> {
  const copy = 'INSERT INTO events (type, occurred_at, data) SELECT type, occurred_at, data FROM events'
  await execSql(api.databaseUrl, store === 'postgres'
    ? `WITH notified AS (SELECT pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema())) ${copy}, notified ORDER BY id DESC LIMIT 1`
    : `${copy} ORDER BY id DESC LIMIT 1`)
}

for (const store of testStores()) {
  describe(`webhook delivery woken by commits (${store})`, () => {
    test('When an event commits, on this instance or from another connection, then it is delivered at once, not at the next poll', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await appWithEndpoint(t, store, receiver, NO_POLL)

      await createdPet(api, { name: 'Rex', categoryId: 1 })
      await receiver.waitFor(1, 10_000)
      await recordEventElsewhere(api, store)
      const [first, second] = await receiver.waitFor(2, 10_000)
      assert.equal(second?.body.replace(/"id":\d+,/, ''), first?.body.replace(/"id":\d+,/, ''), 'the copy recorded by another connection was delivered')
    })

    test('When an order is placed or changed, then its own commit wakes this instance\'s delivery: the signal is raised before the answer, the webhook arrives long before any poll', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await appWithEndpoint(t, store, receiver, NO_POLL, ['order.created', 'order.updated'])
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      let raised = 0
      api.app.database.eventsRecorded.subscribe(() => { raised++ })

      const placed = await api.app.inject({ method: 'POST', url: '/v1/store/orders', headers: { ...api.auth, 'content-type': 'application/json' }, payload: { petId: pet.id } })
      assert.equal(placed.statusCode, 201, placed.body)
      assert.equal(raised, 1, 'the placement\'s commit raised this instance\'s signal before its answer, not only a NOTIFY heard later')
      const approved = await api.app.inject({
        method: 'PATCH',
        url: `/v1/store/orders/${String(placed.json().id)}`,
        headers: { ...api.auth, 'content-type': 'application/merge-patch+json' },
        payload: { status: 'approved' }
      })
      assert.equal(approved.statusCode, 200, approved.body)
      assert.equal(raised, 2, 'the update\'s commit raised it too')

      // the poll is 600 s away: 5 s is only a deadline, far below it
      const delivered = await receiver.waitFor(2, 5_000)
      assert.deepEqual(delivered.map((webhook) => JSON.parse(webhook.body).type).sort(), ['order.created', 'order.updated'])
    })

    test('When an endpoint is enabled again or an event resent, then this instance\'s dispatcher wakes at once, and what wakes the stream\'s tail and the buses (the events signal and channel) stays quiet: no event was recorded', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await appWithEndpoint(t, store, receiver, NO_POLL)
      const [endpoint] = await api.app.webhookStore.listWebhookEndpoints()
      const id = endpoint!.id
      await api.app.webhookStore.updateWebhookEndpoint(id, { enabled: false }, new Date())
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      // what the tail and every bus relay wake on, this instance's signal and other instances' channel alike
      let woken = 0
      const unwatch = watchRecordedEvents(api.app.database, () => { woken++ })
      t.after(unwatch)
      // listening connects on PostgreSQL, and (re)starting to listen calls its subscribers once: settle before counting
      await delay(500)
      woken = 0

      const enabled = await api.app.webhookStore.updateWebhookEndpoint(id, { enabled: true }, new Date())
      assert.equal(enabled.outcome, 'changed')
      // the poll is 600 s away: 5 s is only a deadline, far below it
      const [first] = await receiver.waitFor(1, 5_000)
      assert.equal(String(JSON.parse(first!.body).data.pet.id), String(pet.id), 'the delivery waiting while the endpoint was disabled')
      const eventId = Number(JSON.parse(first!.body).id)
      await delay(200)
      const resent = await api.app.webhookDeliveryLog.resendWebhookEvent(id, eventId)
      assert.equal(resent.outcome, 'queued')
      const [, again] = await receiver.waitFor(2, 5_000)
      assert.equal(JSON.parse(again!.body).id, JSON.parse(first!.body).id, 'the event resent')
      // a notification on the events channel would have arrived by now
      await delay(500)
      assert.equal(woken, 0, 'the stream\'s tail and the buses were woken for deliveries made due, not events recorded')
    })

    test('When an endpoint is idle, then the delivery loop keeps looking but writes nothing and takes no write lock', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await appWithEndpoint(t, store, receiver, ENV)
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      await receiver.waitFor(1, 10_000)
      // the delivery's own writes (record, release) are done
      await delay(500)
      const writes = await watchWrites(t, api.databaseUrl)
      const before = await writes()
      const looked = await passes(api, 'done')
      let holding: (() => void) | undefined
      if (store === 'sqlite') {
        // another connection holds SQLite's write lock meanwhile: a look that wanted it would fail after the busy timeout
        const writer = new Database(api.databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
        writer.exec('BEGIN IMMEDIATE')
        holding = () => { writer.exec('ROLLBACK'); writer.close() }
      }
      try {
        await delay(2_000)
      } finally {
        holding?.()
      }
      assert.deepEqual(await writes(), before, 'an idle service wrote to its database')
      assert.equal(await passes(api, 'failed'), 0, 'a look for work failed (waited for the write lock)')
      assert.ok(await passes(api, 'done') >= looked + 3, 'the loop kept looking (its poll) during the idle time: what shows the check could fail')
    })

    if (store === 'postgres') {
      test('When a pet is created, then its transaction notifies the events channel at commit (what wakes the other instances)', async (t) => {
        const receiver = await webhookReceiver(t)
        const api = await appWithEndpoint(t, store, receiver, ENV)
        const schema = (await execSql(api.databaseUrl, 'SELECT current_schema() AS schema'))[0]?.schema
        await withPostgres(async (client) => {
          // the channel is the server's: other files' schemas notify on it too, each naming its schema
          const heard = new Promise<string | undefined>((resolve) => {
            client.on('notification', (message) => { if (message.payload === schema) resolve(message.payload) })
          })
          await client.query(`LISTEN ${EVENTS_RECORDED_CHANNEL}`)
          await createdPet(api, { name: 'Rex', categoryId: 1 })
          assert.equal(await Promise.race([heard, delay(5_000).then(() => 'nothing within 5 s')]), schema)
        }, api.databaseUrl)
      })
    }
  })
}
