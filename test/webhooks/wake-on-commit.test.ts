import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { WEBHOOK_POLL_INTERVAL_MS } from '../../src/capabilities/webhooks/webhook-policy.js'
import { buildTestApp, createdPet, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '1000', RATE_LIMIT_MAX: '0' }

async function addEndpoint (api: TestApp, url: string): Promise<void> {
  await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
}

/**
 * Holds what any write to the endpoints would need (SQLite: the write lock, `BEGIN IMMEDIATE`; PostgreSQL:
 * a SHARE lock on webhook_endpoints, which every UPDATE of it waits for) for `ms`, and says whether anything
 * of the service wanted it meanwhile (SQLite: a webhook pass failed on the busy lock; PostgreSQL: a lock on
 * the table was waited for).
 */
async function writesWantedWhileLocked (api: TestApp, store: StoreKind, ms: number): Promise<boolean> {
  if (store === 'sqlite') {
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
    const failedPasses = async (): Promise<number> =>
      Number(/petstore_background_passes_total\{[^}]*loop="webhook_delivery"[^}]*outcome="failed"[^}]*\} (\d+)/.exec(await api.app.metrics.registry.metrics())?.[1] ?? 0)
    const before = await failedPasses()
    const db = new Database(api.databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    db.exec('BEGIN IMMEDIATE')
    try {
      await delay(ms)
    } finally {
      db.exec('ROLLBACK')
      db.close()
    }
    return await failedPasses() > before
  }
  const { default: pg } = await import('pg')
  const holder = new pg.Client({ connectionString: api.databaseUrl })
  const watcher = new pg.Client({ connectionString: api.databaseUrl })
  await holder.connect()
  await watcher.connect()
  let waited = false
  try {
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE webhook_endpoints IN SHARE MODE')
    const deadline = Date.now() + ms
    while (Date.now() < deadline && !waited) {
      const { rows } = await watcher.query<{ waiting: number }>(
        "SELECT count(*)::int AS waiting FROM pg_locks WHERE relation = 'webhook_endpoints'::regclass AND NOT granted")
      waited = (rows[0]?.waiting ?? 0) > 0
      await delay(20)
    }
  } finally {
    await holder.query('ROLLBACK')
    await holder.end()
    await watcher.end()
  }
  return waited
}

for (const store of testStores()) {
  describe(`webhook delivery wakes on commit (${store})`, () => {
    test('When a pet is created, then its event reaches the receiver at once, not at the next poll', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      await addEndpoint(api, receiver.url)
      // the first delivery starts the dispatcher (and, on PostgreSQL, its LISTEN): not measured
      await createdPet(api, { name: 'First', categoryId: 1 })
      await receiver.waitFor(1)
      await delay(300)

      const lags: number[] = []
      for (let i = 0; i < 8; i++) {
        // a random phase against the fallback poll
        await delay(40 + Math.random() * 200)
        const committed = Date.now()
        await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })
        const [arrived] = (await receiver.waitFor(i + 2)).slice(-1)
        assert.ok(arrived !== undefined)
        lags.push(arrived.at - committed)
      }
      lags.sort((a, b) => a - b)
      // a bound generous for a busy machine, yet well below what waiting for the poll gives (half of WEBHOOK_POLL_INTERVAL_MS on average)
      assert.ok((lags[4] ?? Infinity) < WEBHOOK_POLL_INTERVAL_MS / 5, `median commit → receipt ${lags[4]} ms (all: ${lags.join(', ')})`)
    })

    test('When an endpoint has nothing to deliver, then the idle service wants no write: its look for work is a read', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      await addEndpoint(api, receiver.url)
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      await receiver.waitFor(1)
      await delay(300)

      // several polls of the fallback
      assert.equal(await writesWantedWhileLocked(api, store, 3 * WEBHOOK_POLL_INTERVAL_MS), false, 'the idle dispatcher asked for a write lock')

      // what shows the check could fail: with work, the service does want the lock
      await createdPet(api, { name: 'Fido', categoryId: 1 })
      await receiver.waitFor(2)
    })
  })
}
