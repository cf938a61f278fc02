import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { type Event, followFeed } from '../helpers/events.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms', WEBHOOK_TIMEOUT_MS: '1000' }

for (const store of testStores()) {
  describe(`category events to webhooks (${store})`, () => {
    test('When an endpoint registered over the API selects category.updated, then it gets each naming as the feed has it, and no pet event', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const admin = generateApiKey()
      await api.app.keyStore.createApiKey('admin', hashApiKey(admin), 'admin')
      const registered = await api.app.inject({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: receiver.url, events: ['category.updated'] })
      })
      assert.equal(registered.statusCode, 201, registered.body)
      const { secret } = registered.json<{ secret: string }>()
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      for (const name of ['Dogs', 'Hounds']) {
        const put = await api.app.inject({ method: 'PUT', url: '/v1/categories/1', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name }) })
        assert.ok([200, 201].includes(put.statusCode), put.body)
      }

      const requests = await receiver.waitFor(2)
      const events = requests.map((request) => new Webhook(secret).verify(request.body, Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))) as Event)
      const feed = (await followFeed(api)).events.filter((event) => (event.type as string) === 'category.updated')
      assert.deepEqual(events, feed)
      assert.deepEqual(events.map((event) => event.type), ['category.updated', 'category.updated'])
    })
  })
}
