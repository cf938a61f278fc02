import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { buildTestApp } from '../helpers/build-app.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

/** SQLite's data_version as another connection sees it: it moves whenever some other connection commits a write. */
function writesSeenBy (t: TestContext, path: string): () => number {
  const reader = new Database(path, { readonly: true, fileMustExist: true })
  t.after(() => { reader.close() })
  return () => reader.pragma('data_version', { simple: true }) as number
}

describe('webhook delivery before any endpoint', () => {
  test('When no endpoint is enabled, then an idle service writes nothing to its database; once one is, the dispatcher starts claiming it', async (t) => {
    const { app, databaseUrl } = await buildTestApp(t, { store: 'sqlite', withKey: false })
    const version = writesSeenBy(t, databaseUrl.slice('sqlite:'.length))
    // past the start-up passes of every loop (expiry, retention, the first look for endpoints)
    await delay(500)
    const idle = version()

    // four polls of the 250 ms delivery loop and more
    await delay(1_500)
    assert.equal(version(), idle, 'an idle service with no endpoint committed a write')
    assert.doesNotMatch(await app.metrics.registry.metrics(), /petstore_background_passes_total\{[^}]*loop="webhook_delivery"/, 'the dispatcher ran before any endpoint existed')

    await app.webhookStore.createWebhookEndpoint({ name: 'hook', url: 'https://hooks.example.com/petstore', eventTypes: ['pet.created'], secret: SECRET }, new Date())
    await app.petStore.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
    const created = version()
    const deadline = Date.now() + 5_000
    // the dispatcher's claim and schedule are writes: what shows that the check above could fail
    while (version() === created) {
      assert.ok(Date.now() < deadline, 'no write after an endpoint was enabled: the dispatcher never started')
      await delay(50)
    }
    // a pass is counted once it ends (its attempt to the unreachable host fails within WEBHOOK_TIMEOUT_MS)
    const passes = /petstore_background_passes_total\{[^}]*loop="webhook_delivery"[^}]*\} [1-9]/
    while (!passes.test(await app.metrics.registry.metrics())) {
      assert.ok(Date.now() < deadline + 15_000, 'the dispatcher wrote but never finished a pass')
      await delay(50)
    }
  })
})
