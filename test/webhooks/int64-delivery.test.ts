import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

// a real receiver on 127.0.0.1, so the private-network and http switches are on
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms', WEBHOOK_TIMEOUT_MS: '1000' }

for (const store of testStores()) {
  describe(`webhook delivery of int64 values (${store})`, () => {
    test('When a pet with a category id beyond 2^53 is created and changed, then the receiver gets the feed\'s bytes (its serializer\'s, as getEvent answers), digit for digit and signed', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const secret = generateWebhookSecret()
      await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url: receiver.url, eventTypes: ['pet.created', 'pet.updated'], secret }, new Date())
      const headers = { ...api.auth, 'content-type': 'application/json' }

      const created = await api.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: '{"name":"Rex","categoryId":9223372036854775807}' })
      const id = (parseJson(created.body) as { id: number }).id
      const patched = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${id}`, headers, payload: '{"categoryId":-9223372036854775808}' })
      assert.equal(patched.statusCode, 200, patched.body)

      const requests = await receiver.waitFor(2)
      const feed = parseJson((await api.app.inject({ method: 'GET', url: '/v1/events', headers: api.auth })).body) as unknown[]
      for (const [index, request] of requests.entries()) {
        // the signature covers the bytes as sent
        new Webhook(secret).verify(request.body, Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])))
        assert.deepEqual(parseJson(request.body), feed[index])
        // written by the feed's own serializer: the bytes getEvent answers, to the letter
        const one = await api.app.inject({ method: 'GET', url: `/v1/events/${String((feed[index] as { id: number }).id)}`, headers: api.auth })
        assert.equal(request.body, one.body)
      }
      assert.match(requests[0]?.body ?? '', /"categoryId":9223372036854775807,"status"/)
      assert.match(requests[1]?.body ?? '', /"pet":\{[^}]*"categoryId":-9223372036854775808,[^}]*\},"previous":\{"categoryId":9223372036854775807\}/)
    })
  })
}
