import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { IdempotencyClaimLostError } from '../../src/capabilities/idempotency/index.js'
import { WebhookEndpointLimitError, type WebhookStore } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { execSql, testStores, type StoreKind } from '../helpers/databases.js'
import { openStores, type OpenedStores } from '../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const KEY = 'whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A='
const PUBLIC_KEY = 'whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='

async function openFresh (t: TestContext, kind: StoreKind): Promise<OpenedStores> {
  return await openStores(t, kind)
}

async function add (webhooks: WebhookStore, url: string, options: { maxEndpoints?: number } = {}): Promise<number> {
  return (await webhooks.createWebhookEndpoint({ name: 'hook', url, eventTypes: ['pet.created'], secret: SECRET }, new Date(), options)).id
}

// What every WebhookEndpointStore promises beyond the CLI's first needs, whatever its engine
for (const kind of testStores()) {
  describe(`WebhookEndpointStore contract (${kind})`, () => {
    test('When an endpoint is registered with every setting, then it is found and listed with them, its private key never among them', async (t) => {
      const { webhooks } = await openFresh(t, kind)
      const now = new Date('2026-11-25T09:30:00.000Z')
      const created = await webhooks.createWebhookEndpoint({
        name: 'signed',
        url: 'https://hooks.example.com/signed',
        eventTypes: ['pet.created'],
        secret: KEY,
        description: 'ed25519',
        rateLimit: 7,
        signing: 'ed25519',
        publicKey: PUBLIC_KEY,
        disabled: true
      }, now)

      const found = await webhooks.findWebhookEndpoint(created.id)

      assert.deepEqual(found, created)
      assert.deepEqual({ ...created, id: 0 }, {
        id: 0,
        name: 'signed',
        url: 'https://hooks.example.com/signed',
        eventTypes: ['pet.created'],
        description: 'ed25519',
        rateLimit: 7,
        signing: 'ed25519',
        publicKey: PUBLIC_KEY,
        createdAt: now.toISOString(),
        disabledAt: now.toISOString(),
        waiting: 0,
        failed: 0,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastFailure: null
      })
      assert.equal(await webhooks.findWebhookEndpoint(created.id + 1), undefined)
      assert.doesNotMatch(JSON.stringify(await webhooks.listWebhookEndpoints()), /whsk_/)
    })

    test('When endpoints are listed a page at a time, then each page holds those after the position given, in id order', async (t) => {
      const { webhooks } = await openFresh(t, kind)
      const ids = [await add(webhooks, 'https://a.example.com/'), await add(webhooks, 'https://b.example.com/'), await add(webhooks, 'https://c.example.com/')]

      const first = await webhooks.listWebhookEndpoints({ afterId: 0, limit: 2 })
      const second = await webhooks.listWebhookEndpoints({ afterId: first.at(-1)?.id ?? 0, limit: 2 })

      assert.deepEqual([first.map(({ id }) => id), second.map(({ id }) => id)], [ids.slice(0, 2), ids.slice(2)])
    })

    test('When the most endpoints allowed are registered, then one more is refused and nothing is added, also when creates race for the last place', async (t) => {
      const { webhooks } = await openFresh(t, kind)
      await add(webhooks, 'https://a.example.com/', { maxEndpoints: 3 })

      const racing = await Promise.allSettled([1, 2, 3, 4, 5].map(async (i) => await add(webhooks, `https://r${i}.example.com/`, { maxEndpoints: 3 })))

      assert.equal(racing.filter(({ status }) => status === 'fulfilled').length, 2)
      for (const outcome of racing.filter((settled): settled is PromiseRejectedResult => settled.status === 'rejected')) {
        assert.ok(outcome.reason instanceof WebhookEndpointLimitError, String(outcome.reason))
        assert.equal(outcome.reason.limit, 3)
      }
      assert.equal((await webhooks.listWebhookEndpoints()).length, 3)
    })

    test('When a create completes an Idempotency-Key claim, then the answer is stored with it in the same transaction; a claim no longer held registers nothing', async (t) => {
      const { webhooks, idempotency, databaseUrl } = await openFresh(t, kind)
      const now = new Date()
      const claim = { scope: 'env:test', key: 'endpoint-1', token: 'token-1' }
      await idempotency.claimIdempotencyKey({ ...claim, fingerprint: 'f', now, leaseMs: 60_000, ttlMs: 86_400_000 })

      const created = await webhooks.createWebhookEndpoint({ name: 'hook', url: 'https://a.example.com/', eventTypes: ['pet.created'], secret: SECRET }, now,
        { completing: { claim, answer: (endpoint) => JSON.stringify({ id: endpoint.id, secret: SECRET }) } })
      const lost = webhooks.createWebhookEndpoint({ name: 'hook', url: 'https://b.example.com/', eventTypes: ['pet.created'], secret: SECRET }, now,
        { completing: { claim: { ...claim, token: 'taken-over' }, answer: () => '{}' }, maxEndpoints: 10 })

      await assert.rejects(lost, IdempotencyClaimLostError)
      const [stored] = await execSql(databaseUrl, "SELECT response_status, response_body FROM idempotency_keys WHERE key = 'endpoint-1'")
      assert.deepEqual([Number(stored?.response_status), stored?.response_body], [201, JSON.stringify({ id: created.id, secret: SECRET })])
      assert.deepEqual((await webhooks.listWebhookEndpoints()).map(({ url }) => url), ['https://a.example.com/'])
    })

    test('When an endpoint\'s settings are changed, then those given change and the others keep their value; null removes a description or a limit', async (t) => {
      const { webhooks } = await openFresh(t, kind)
      const { id } = await webhooks.createWebhookEndpoint({ name: 'hook', url: 'https://a.example.com/', eventTypes: ['pet.created'], secret: SECRET, description: 'd', rateLimit: 3 }, new Date())

      const moved = await webhooks.updateWebhookEndpoint(id, { url: 'https://b.example.com/', rateLimit: 9 }, new Date())
      const cleared = await webhooks.updateWebhookEndpoint(id, { description: null, rateLimit: null, name: 'renamed' }, new Date())

      assert.ok(moved.outcome === 'changed' && cleared.outcome === 'changed')
      assert.deepEqual([moved.after.url, moved.after.description, moved.after.rateLimit, moved.after.name], ['https://b.example.com/', 'd', 9, 'hook'])
      assert.deepEqual([cleared.after.url, cleared.after.description, cleared.after.rateLimit, cleared.after.name], ['https://b.example.com/', null, null, 'renamed'])
    })

    test('When a change comes with a precondition, then it is judged on the endpoint inside the change\'s transaction: false changes nothing', async (t) => {
      const { webhooks } = await openFresh(t, kind)
      const id = await add(webhooks, 'https://a.example.com/')

      const refused = await webhooks.updateWebhookEndpoint(id, { name: 'x' }, new Date(), (current) => current.name === 'not this')
      const made = await webhooks.updateWebhookEndpoint(id, { name: 'y' }, new Date(), (current) => current.name === 'hook')

      assert.equal(refused.outcome, 'precondition_failed')
      assert.equal(refused.outcome === 'precondition_failed' ? refused.current.name : '', 'hook')
      assert.equal(made.outcome === 'changed' ? made.after.name : '', 'y')
      assert.deepEqual(await webhooks.updateWebhookEndpoint(id + 1, { name: 'z' }, new Date(), () => true), { outcome: 'not_found' })
    })

    test('When an ed25519 endpoint\'s key is rotated, then its public key is the new one and the old private key signs until the overlap ends', async (t) => {
      const { webhooks, databaseUrl } = await openFresh(t, kind)
      const now = new Date()
      const { id } = await webhooks.createWebhookEndpoint({ name: 'hook', url: 'https://a.example.com/', eventTypes: ['pet.created'], secret: KEY, signing: 'ed25519', publicKey: PUBLIC_KEY }, now)

      assert.ok(await webhooks.rotateWebhookSecret(id, 'whsk_new', new Date(now.getTime() + 60_000), now, 'whpk_new'))

      assert.equal((await webhooks.findWebhookEndpoint(id))?.publicKey, 'whpk_new')
      const [row] = await execSql(databaseUrl, 'SELECT secret, retired_secrets FROM webhook_endpoints')
      assert.equal(row?.secret, 'whsk_new')
      assert.deepEqual(JSON.parse(String(row?.retired_secrets)).map(({ secret }: { secret: string }) => secret), [KEY])
    })
  })
}
