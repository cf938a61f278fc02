import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WebhookEndpoint } from '@petstore/client'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { testStores } from '../helpers/build-app.js'
import { clientOf, petStoreError, startService } from '../helpers/client-service.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

const RECEIVER_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

for (const store of testStores()) {
  describe(`@petstore/client webhookEndpoints against the live service (${store})`, () => {
    test('When an admin client registers, lists, reads, changes, tests, resends to and deletes an endpoint, then each call answers what the service sent, typed', async (t) => {
      const service = await startService(t, { store, env: RECEIVER_ENV })
      const adminKey = generateApiKey()
      await service.app.keyStore.createApiKey('integrator', hashApiKey(adminKey), 'admin')
      const client = clientOf(service, { apiKey: adminKey })
      const receiver = await webhookReceiver(t)

      const { endpoint: created, etag } = await client.webhookEndpoints.create({ url: receiver.url, events: ['pet.created'], rateLimit: 50 })
      const pet = await client.createPet({ name: 'Rex', categoryId: 1 })
      await receiver.waitFor(1)
      const page = await client.webhookEndpoints.list({ limit: 1 })
      const all: WebhookEndpoint[] = []
      for await (const endpoint of client.webhookEndpoints.all()) all.push(endpoint)
      const read = await client.webhookEndpoints.get(created.id)
      const changed = await client.webhookEndpoints.update(created.id, { name: 'storefront', rateLimit: null }, { ifMatch: etag })
      const stale = await petStoreError(() => client.webhookEndpoints.update(created.id, { name: 'again' }, { ifMatch: etag }))
      const tested = await client.webhookEndpoints.test(created.id)
      const [event] = (await client.listEvents()).events
      assert.ok(event !== undefined)
      const resent = await client.webhookEndpoints.resend(created.id, event.id)
      await receiver.waitFor(3)
      const attempts = await client.webhookEndpoints.listAttempts(created.id, { status: 'succeeded' })
      const recovered = await client.webhookEndpoints.recover(created.id, { since: new Date(Date.now() - 60_000).toISOString() })
      const rotated = await client.webhookEndpoints.rotateSecret(created.id)
      await client.webhookEndpoints.delete(created.id)
      const gone = await petStoreError(() => client.webhookEndpoints.get(created.id))

      assert.match(String(created.secret), /^whsec_/)
      assert.deepEqual([created.url, created.events, created.rateLimit], [receiver.url, ['pet.created'], 50])
      assert.match(String(service.served.find((served) => served.method === 'POST' && served.url === '/v1/webhook-endpoints')?.idempotencyKey), UUID)
      assert.deepEqual(page.endpoints.map(({ id }) => id), [created.id])
      assert.equal(page.nextCursor, undefined)
      assert.deepEqual(all.map(({ id }) => id), [created.id])
      assert.equal(read.endpoint.id, created.id)
      assert.equal('secret' in read.endpoint, false)
      assert.deepEqual([changed.endpoint.name, changed.endpoint.rateLimit], ['storefront', undefined])
      assert.deepEqual([stale.code, stale.status, stale.attempts], ['precondition_failed', 412, 1])
      assert.deepEqual([tested.delivered, tested.status, tested.type], [true, 204, 'webhook.test'])
      assert.deepEqual(resent, { endpointId: created.id, eventId: event.id, attempt: 2 })
      assert.ok(attempts.attempts.length >= 1 && attempts.attempts.every(({ result }) => result === 'delivered'))
      assert.equal(recovered.queued, 0)
      assert.match(String(rotated.secret), /^whsec_/)
      assert.deepEqual([gone.code, gone.status], ['webhook_endpoint_not_found', 404])
      assert.ok(pet.id >= 1)
    })

    test('When a write key calls an endpoint operation, then it fails with insufficient_scope, 403, without a retry', async (t) => {
      const service = await startService(t, { store, env: RECEIVER_ENV })
      const client = clientOf(service)

      const error = await petStoreError(() => client.webhookEndpoints.list())

      assert.deepEqual([error.code, error.status, error.attempts, error.operation], ['insufficient_scope', 403, 1, 'listWebhookEndpoints'])
    })
  })
}
