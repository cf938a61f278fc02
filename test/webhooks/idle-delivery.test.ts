import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { watchWrites } from '../helpers/store-writes.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

for (const store of testStores()) {
  describe(`webhook delivery before any endpoint (${store})`, () => {
    test('When no endpoint is enabled, then an idle service writes nothing to its database; once one is, the dispatcher starts claiming it', async (t) => {
      const { app, databaseUrl } = await buildTestApp(t, { store, withKey: false })
      const writes = await watchWrites(t, databaseUrl)
      // past the start-up passes of every loop (expiry, retention, the first look for endpoints)
      await delay(500)
      const idle = await writes()

      // four polls of the 250 ms delivery loop and more
      await delay(1_500)
      assert.deepEqual(await writes(), idle, 'an idle service with no endpoint committed a write')
      assert.doesNotMatch(await app.metrics.registry.metrics(), /petstore_background_passes_total\{[^}]*loop="webhook_delivery"/, 'the dispatcher ran before any endpoint existed')

      await app.webhookStore.createWebhookEndpoint({ name: 'hook', url: 'https://hooks.example.com/petstore', eventTypes: ['pet.created'], secret: SECRET }, new Date())
      await app.petStore.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      const created = await writes()
      const deadline = Date.now() + 5_000
      // the dispatcher's claim and schedule are writes: what shows that the check above could fail
      while (isDeepStrictEqual(await writes(), created)) {
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
}
