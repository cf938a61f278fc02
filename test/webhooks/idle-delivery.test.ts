import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { watchWrites } from '../helpers/store-writes.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

for (const store of testStores()) {
  describe(`webhook delivery before any endpoint (${store})`, () => {
    test('When no endpoint is enabled, then an idle service writes nothing to its database; once one is, the dispatcher starts claiming it', async (t) => {
      const { app, databaseUrl } = await buildTestApp(t, { store, withKey: false, env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })
      const writes = await watchWrites(t, databaseUrl)
      // past the start-up passes of every loop (expiry, retention, the first look for endpoints)
      await delay(500)
      const idle = await writes()

      // four polls of the 250 ms delivery loop and more
      await delay(1_500)
      assert.deepEqual(await writes(), idle, 'an idle service with no endpoint committed a write')
      assert.doesNotMatch(await app.metrics.registry.metrics(), /petstore_background_passes_total\{[^}]*loop="webhook_delivery"/, 'the dispatcher ran before any endpoint existed')

      // the receiver holds the first delivery until the writes are read: the dispatcher's claim and schedule may
      // commit before any reading could be taken, its record of the answer only after this one
      const receiver = await webhookReceiver(t)
      const held: ServerResponse[] = []
      receiver.answer(() => ({ respond: (response) => { held.push(response) } }))
      await app.webhookStore.createWebhookEndpoint({ name: 'hook', url: receiver.url, eventTypes: ['pet.created'], secret: SECRET }, new Date())
      await app.petStore.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
      await receiver.waitFor(1, 5_000).catch(() => assert.fail('no delivery after an endpoint was enabled: the dispatcher never started'))
      const sending = await writes()
      for (const response of held) response.writeHead(204).end()
      const deadline = Date.now() + 5_000
      // what shows that the check above could fail: the dispatcher's writes are seen
      while (isDeepStrictEqual(await writes(), sending)) {
        assert.ok(Date.now() < deadline, 'the dispatcher recorded the answer, but no write was seen')
        await delay(50)
      }
      // a pass is counted once it ends (after the answer was recorded)
      const passes = /petstore_background_passes_total\{[^}]*loop="webhook_delivery"[^}]*\} [1-9]/
      while (!passes.test(await app.metrics.registry.metrics())) {
        assert.ok(Date.now() < deadline + 15_000, 'the dispatcher wrote but never finished a pass')
        await delay(50)
      }
    })
  })
}
