import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { parseEventTypes } from '../../src/capabilities/webhooks/webhook-endpoints.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { type Event, followFeed } from '../helpers/events.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'
import { patchOrder, placedOrder } from './orders-helpers.js'

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms', WEBHOOK_TIMEOUT_MS: '1000' }

for (const store of testStores()) {
  describe(`order events to webhooks (${store})`, () => {
    test('When an endpoint subscribes to the order events, then it gets order.created and order.updated as the feed has them, and no pet event', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const secret = generateWebhookSecret()
      await api.app.webhookStore.createWebhookEndpoint({ name: 'orders', url: receiver.url, eventTypes: parseEventTypes('order.created,order.updated', api.app.eventTypes.types), secret }, new Date())
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      const order = await placedOrder(api, pet.id)
      assert.equal((await patchOrder(api, order.id, { status: 'cancelled' })).statusCode, 200)

      const requests = await receiver.waitFor(2)
      const events = requests.map((request) => new Webhook(secret).verify(request.body, Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))) as Event)
      const feed = (await followFeed(api)).events.filter((event) => event.type.startsWith('order.'))
      assert.deepEqual(events, feed)
      assert.deepEqual(events.map((event) => event.type), ['order.created', 'order.updated'])
    })
  })
}
