import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { WebhookEndpointRecord } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { buildTestApp, createdPet, patchPet, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { childEnv, runCli, type CliResult } from '../helpers/processes.js'
import { endpointState, eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'

// what operators change on a running endpoint, with the real CLI beside an app whose dispatcher delivers to a
// real receiver on 127.0.0.1. One delivery in flight an endpoint: the order asserted is what that promises
const ENV = { WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '20', RATE_LIMIT_MAX: '0' }
// long enough that nothing else arrives unnoticed: several polls and a retry of the short schedule
const QUIET_MS = 800

interface Running {
  api: TestApp
  cli: (...args: string[]) => Promise<CliResult>
}

async function running (t: TestContext, store: StoreKind, schedule: string): Promise<Running> {
  const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_RETRY_SCHEDULE: schedule } })
  const env = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent', ...ENV })
  return { api, cli: async (...args) => await runCli(args, env) }
}

async function succeeded (result: Promise<CliResult>): Promise<string> {
  const { code, stdout, stderr } = await result
  assert.equal(code, 0, stderr)
  return stdout
}

async function feedIds (api: TestApp): Promise<number[]> {
  return (await followFeed(api)).events.map((event) => event.id)
}

const webhookIds = (requests: readonly ReceivedWebhook[]): number[] => requests.map((request) => Number(request.headers['webhook-id']))

async function quietly (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS))
}

for (const store of testStores()) {
  describe(`operators' edits of a webhook endpoint (${store})`, () => {
    test('When `webhooks update` changes the event types and the name, then the secret is kept, a queued delivery of a type no longer wanted is not sent, and a type newly wanted applies to events recorded from then on', async (t) => {
      const receiver = await webhookReceiver(t)
      receiver.answer(() => 500)
      // retried every 200 ms for a while: a delivery left in the queue would be sent soon after the receiver is fixed
      const { api, cli } = await running(t, store, Array(20).fill('200ms').join(','))
      const added = JSON.parse(await succeeded(cli('webhooks', 'add', receiver.url, '--events', 'pet.updated', '--name', 'shop', '--json'))) as { endpoint: { id: number }, secret: string }
      const id = added.endpoint.id

      // a pet.updated waits in the queue, failing
      const first = await createdPet(api, { name: 'Queued', categoryId: 1 })
      assert.equal((await patchPet(api, first.id, { status: 'pending' })).statusCode, 200)
      await receiver.waitFor(2)
      assert.equal((await endpointState(api, id)).waiting, 1)
      // while disabled, events are recorded without being queued: a pet.created, which update is about to ask for, and a pet.updated
      await succeeded(cli('webhooks', 'disable', String(id)))
      const second = await createdPet(api, { name: 'Before the update', categoryId: 2 })
      assert.equal((await patchPet(api, second.id, { status: 'pending' })).statusCode, 200)

      const updated = await cli('webhooks', 'update', String(id), '--events', 'pet.created', '--name', 'storefront')
      const sentBefore = receiver.received.length
      receiver.answer(() => 204)
      await succeeded(cli('webhooks', 'enable', String(id)))
      const third = await createdPet(api, { name: 'After the update', categoryId: 3 })
      assert.equal((await patchPet(api, third.id, { status: 'pending' })).statusCode, 200)
      await receiver.waitFor(sentBefore + 1)
      await quietly()

      assert.equal(updated.code, 0, updated.stderr)
      assert.match(updated.stdout, new RegExp(`^Updated webhook endpoint ${id} \\(storefront\\) in .*: it receives pet\\.created; its secret and its queue are kept\\.$`, 'm'))
      const [, , createdAfter] = (await followFeed(api)).events.filter((event) => event.type === 'pet.created')
      const sent = receiver.received.slice(sentBefore)
      assert.deepEqual(webhookIds(sent), [createdAfter?.id], 'after the update: only the pet.created recorded after it, neither the queued pet.updated nor the pet.created recorded before')
      const headers = Object.fromEntries(Object.entries(sent[0]?.headers ?? {}).map(([name, value]) => [name, String(value)]))
      assert.doesNotThrow(() => new Webhook(added.secret).verify(sent[0]?.body ?? '', headers), 'signed with the secret add printed')
      const endpoint = await endpointState(api, id)
      assert.deepEqual({ name: endpoint.name, eventTypes: endpoint.eventTypes, waiting: endpoint.waiting, failed: endpoint.failed },
        { name: 'storefront', eventTypes: ['pet.created'], waiting: 0, failed: 0 })
    })

    test('When an endpoint is disabled with a delivery waiting for its retry, then nothing is sent until `webhooks enable`, which sends the waiting one and then the events recorded meanwhile, in event-id order; each says when there is nothing to do', async (t) => {
      const receiver = await webhookReceiver(t)
      receiver.answer(() => 500)
      // the failed delivery's retry is an hour away: only enable makes it due
      const { api, cli } = await running(t, store, '1h')
      const { endpoint: { id } } = JSON.parse(await succeeded(cli('webhooks', 'add', receiver.url, '--events', 'pet.created', '--json'))) as { endpoint: { id: number } }
      await createdPet(api, { name: 'Waiting', categoryId: 1 })
      await receiver.waitFor(1)
      await eventually(async () => (await endpointState(api, id)).lastFailureAt !== null, 'the failure is recorded')

      const disabled = await succeeded(cli('webhooks', 'disable', String(id)))
      const again = await succeeded(cli('webhooks', 'disable', String(id), '--json'))
      receiver.answer(() => 204)
      await createdPet(api, { name: 'While disabled', categoryId: 2 })
      await createdPet(api, { name: 'Also while disabled', categoryId: 3 })
      await quietly()
      const whileDisabled: WebhookEndpointRecord = await endpointState(api, id)
      const sentWhileDisabled = receiver.received.length

      const enabled = await succeeded(cli('webhooks', 'enable', String(id)))
      await receiver.waitFor(4)
      const enabledAgain = await cli('webhooks', 'enable', String(id))
      await quietly()

      assert.match(disabled, new RegExp(`^Disabled webhook endpoint ${id} in .*: nothing is sent to it until \`webhooks enable ${id}\`; its 1 waiting delivery is kept\\.$`, 'm'))
      assert.deepEqual({ ...JSON.parse(again) as Record<string, unknown>, database: undefined }, { database: undefined, id, disabled: true, changed: false })
      assert.equal(sentWhileDisabled, 1, 'a request was sent to a disabled endpoint')
      assert.ok(whileDisabled.disabledAt !== null, 'disabled')
      assert.equal(whileDisabled.waiting, 3, 'waiting while disabled: the queued delivery and the two events recorded meanwhile, which enable sends')
      assert.match(enabled, new RegExp(`^Enabled webhook endpoint ${id} in .*; its waiting deliveries resume\\.$`, 'm'))
      const events = await feedIds(api)
      assert.deepEqual(webhookIds(receiver.received.slice(1)), events, 'after enable: the waiting delivery, then the events recorded while disabled, each once, in event-id order')
      assert.equal(enabledAgain.code, 0, enabledAgain.stderr)
      assert.match(enabledAgain.stdout, new RegExp(`^Webhook endpoint ${id} in .* is already enabled; nothing to do\\.$`, 'm'))
      assert.equal(receiver.received.length, 4)
    })
  })
}
