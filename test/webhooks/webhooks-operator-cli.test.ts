import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { WebhookTestMessageSchema } from '../../src/capabilities/webhooks/webhook-test-message.js'
import { createAjv } from '../../src/infra/http/validation.js'
import type { WebhookAttemptRecord } from '../../src/capabilities/webhooks/store/webhook-delivery-log.js'
import { loadConfig } from '../../src/infra/config/config.js'
import { describeDatabase } from '../../src/infra/database/open-database.js'
import { execSql, freshDatabaseUrl, testStores, type StoreKind } from '../helpers/databases.js'
import { bearer, strongApiKey } from '../helpers/live-server.js'
import { childEnv, freePort, runCli, serverProcesses, type CliResult, type ServerProcess } from '../helpers/processes.js'
import { openStores } from '../helpers/stores.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'

// the operator's commands as they are run: `petstore webhooks …` processes beside a server process, a real
// receiver on 127.0.0.1 (so http: and private networks are allowed), on each store
const RECEIVER_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }

interface Setup {
  databaseUrl: string
  database: string
  cli: (...args: string[]) => Promise<CliResult>
}

async function freshSetup (t: TestContext, store: StoreKind): Promise<Setup> {
  const databaseUrl = await freshDatabaseUrl(t, store)
  const env = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...RECEIVER_ENV })
  return { databaseUrl, database: describeDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database), cli: async (...args) => await runCli(args, env) }
}

/** Runs a command that must succeed with --json, and returns its document. */
async function json<T> (setup: Setup, ...args: string[]): Promise<T> {
  const result = await setup.cli(...args, '--json')
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
  return JSON.parse(result.stdout) as T
}

async function addEndpoint (setup: Setup, url: string): Promise<{ id: number, secret: string }> {
  const added = await json<{ endpoint: { id: number }, secret: string }>(setup, 'webhooks', 'add', url, '--events', 'pet.created')
  return { id: added.endpoint.id, secret: added.secret }
}

async function attempts (setup: Setup, id: number, ...options: string[]): Promise<WebhookAttemptRecord[]> {
  return (await json<{ attempts: WebhookAttemptRecord[] }>(setup, 'webhooks', 'deliveries', String(id), ...options)).attempts
}

async function createPets (server: ServerProcess, key: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ name: `Pet ${i}`, categoryId: 1 }) })
    assert.equal(res.status, 201, await res.text())
  }
}

// the timestamp's pattern checks it; the format is the document's word for it
const isTestMessage = createAjv({}, { formats: { 'date-time': true } }).compile(WebhookTestMessageSchema)

const ids = (requests: readonly ReceivedWebhook[]): string[] => requests.map((request) => String(request.headers['webhook-id']))

function headersOf (request: ReceivedWebhook): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
}

for (const store of testStores()) {
  describe(`npx petstore webhooks test, deliveries and retry (${store})`, () => {
    test('When `webhooks test` is run, then the endpoint gets one webhook.test message signed with its secret, outside the feed, and the command prints the status and how long it took', async (t) => {
      const setup = await freshSetup(t, store)
      const receiver = await webhookReceiver(t)
      receiver.answer((_request, index) => index === 0 ? 204 : { status: 503, headers: { 'retry-after': '2' } })
      const { id, secret } = await addEndpoint(setup, receiver.url)

      const delivered = await setup.cli('webhooks', 'test', String(id))
      const failed = await setup.cli('webhooks', 'test', String(id), '--json')

      assert.equal(delivered.code, 0, delivered.stderr)
      assert.match(delivered.stdout, new RegExp(`^Sent a webhook\\.test message \\(webhook-id test_[\\w-]+\\) to webhook endpoint ${id} \\(${receiver.url}\\) of .*: delivered, answered 204 in \\d+ ms\\.$`, 'm'))
      assert.ok(delivered.stdout.includes(setup.database))
      assert.equal(failed.code, 1, 'not delivered: exit code 1')
      const outcome = JSON.parse(failed.stdout) as Record<string, unknown>
      assert.deepEqual({ ...outcome, webhookId: undefined, durationMs: undefined }, {
        database: setup.database, id, url: receiver.url, webhookId: undefined, type: 'webhook.test', disabled: false, delivered: false, status: 503, error: 'answered 503', durationMs: undefined
      })
      assert.ok(typeof outcome.durationMs === 'number' && outcome.durationMs >= 0)

      const [first, second] = await receiver.waitFor(2) as [ReceivedWebhook, ReceivedWebhook]
      for (const request of [first, second]) {
        const body = new Webhook(secret).verify(request.body, headersOf(request))
        assert.ok(isTestMessage(body), `${request.body}: ${JSON.stringify(isTestMessage.errors)}`)
        assert.deepEqual({ ...(body as unknown as Record<string, unknown>), timestamp: undefined }, {
          type: 'webhook.test', timestamp: undefined, data: { endpointId: id, message: 'A test message (npx petstore webhooks test, or POST /v1/webhook-endpoints/{endpointId}/test): not an event of the feed.' }
        })
        assert.match(String(request.headers['webhook-id']), /^test_[\w-]{16}$/)
      }
      assert.equal(ids([second])[0], outcome.webhookId)
      assert.notEqual(ids([first])[0], ids([second])[0], 'each test message has an id of its own')
      assert.equal(Number((await execSql(setup.databaseUrl, 'SELECT count(*) AS n FROM events'))[0]?.n), 0, 'a test message is not an event')
      assert.deepEqual(await attempts(setup, id), [], 'a test message is not a delivery attempt')
      assert.equal(receiver.received.length, 2, 'a test message is not retried')
    })

    test('When `webhooks test` is run without private networks allowed, then the address guard of deliveries refuses the receiver on loopback and nothing is sent', async (t) => {
      const setup = await freshSetup(t, store)
      const receiver = await webhookReceiver(t)
      const { id } = await addEndpoint(setup, receiver.url)

      const refused = await runCli(['webhooks', 'test', String(id)], childEnv({ DATABASE_URL: setup.databaseUrl, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_HTTP: 'true' }))

      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /not delivered: refused: 127\.0\.0\.1 is in 127\.0\.0\.0\/8, Loopback/)
      assert.equal(receiver.received.length, 0)
    })

    test('When a disabled endpoint has deliveries queued and events of its types are recorded meanwhile, then `webhooks list` counts as waiting what `webhooks enable` then delivers', async (t) => {
      const setup = await freshSetup(t, store)
      const receiver = await webhookReceiver(t)
      const { id } = await addEndpoint(setup, receiver.url)
      const stores = await openStores(t, store, setup.databaseUrl)
      const pets = [await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' }), await stores.pets.createPet({ name: 'Fido', categoryId: 1, status: 'available' })]
      // queued as an instance's dispatcher queues them before it sends them: scheduled, then the lease given back
      const claim = await stores.webhooks.claimWebhookEndpoint(new Date(), 60_000, 'a-stopped-instance', true)
      assert.ok(claim !== undefined)
      assert.equal(await stores.webhooks.scheduleWebhookDeliveries(claim, 100), 2)
      await stores.webhooks.releaseWebhookEndpoint(claim, new Date())
      assert.equal((await setup.cli('webhooks', 'disable', String(id))).code, 0)
      // recorded while it is disabled: nothing schedules them until it is enabled; a pet.updated is not of its types
      for (const name of ['Bella', 'Max', 'Luna']) pets.push(await stores.pets.createPet({ name, categoryId: 1, status: 'available' }))
      assert.equal((await stores.pets.updatePet(pets[0]?.id ?? 0, { name: 'Rex II' })).outcome, 'updated')

      const [listed] = (await json<{ endpoints: Array<{ id: number, waiting: number, disabledAt: string | null }> }>(setup, 'webhooks', 'list')).endpoints
      const table = await setup.cli('webhooks', 'list')

      assert.deepEqual({ id: listed?.id, waiting: listed?.waiting, disabled: listed?.disabledAt !== null }, { id, waiting: 5, disabled: true },
        'the two deliveries queued and the three pet.created recorded while it was disabled')
      assert.match(table.stdout, new RegExp(`^${id}\\s.*\\s5\\s+0\\s+-\\s+-$`, 'm'), 'the table\'s WAITING column')

      const key = strongApiKey()
      await serverProcesses(t).start({ DATABASE_URL: setup.databaseUrl, PETSTORE_API_KEYS: key, ...RECEIVER_ENV })
      assert.equal((await setup.cli('webhooks', 'enable', String(id))).code, 0)
      await eventually(async () => (await json<{ endpoints: Array<{ waiting: number }> }>(setup, 'webhooks', 'list')).endpoints[0]?.waiting === 0, 'every waiting delivery is made')
      const created = (await execSql(setup.databaseUrl, "SELECT id FROM events WHERE type = 'pet.created' ORDER BY id")).map((row) => String(row.id))
      assert.deepEqual(ids(receiver.received).sort(), created.sort(), 'enabling it delivered the five it counted, each once')
    })

    test('When deliveries are given up, then `webhooks deliveries` shows every attempt, and after `webhooks retry` a running instance is woken and delivers them oldest first, its lag on /metrics', async (t) => {
      const setup = await freshSetup(t, store)
      const servers = serverProcesses(t)
      const receiver = await webhookReceiver(t)
      receiver.answer(() => 500)
      const key = strongApiKey()
      const { id } = await addEndpoint(setup, receiver.url)
      // one retry 50 ms after the first attempt, then given up; one delivery in flight, so they go in event-id order
      const serverEnv = { DATABASE_URL: setup.databaseUrl, PETSTORE_API_KEYS: key, RATE_LIMIT_MAX: '0', ...RECEIVER_ENV, WEBHOOK_ENDPOINT_CONCURRENCY: '1' }
      const failing = await servers.start({ ...serverEnv, WEBHOOK_RETRY_SCHEDULE: '50ms', WEBHOOK_POLL_INTERVAL_MS: '20' })
      await createPets(failing, key, 3)
      await eventually(async () => Number((await execSql(setup.databaseUrl, 'SELECT count(*) AS n FROM webhook_deliveries WHERE failed_at IS NOT NULL'))[0]?.n) === 3,
        'the three deliveries are given up')
      await failing.stop()
      const events = [...new Set(ids(receiver.received))].map(Number)
      assert.equal(events.length, 3)

      const log = await attempts(setup, id)
      const failedOnly = await attempts(setup, id, '--failed', '--limit', '2')
      const table = await setup.cli('webhooks', 'deliveries', String(id))

      // after a failure the endpoint's later events go on while the failed one waits: the attempts interleave
      const summary = log.map(({ eventId, eventType, attempt, result, status, error }) => JSON.stringify([eventId, eventType, attempt, result, status, error]))
      assert.deepEqual([...summary].sort(), events.flatMap((event) => [[event, 'pet.created', 1, 'retrying', 500, 'answered 500'], [event, 'pet.created', 2, 'failed', 500, 'answered 500']])
        .map((attempt) => JSON.stringify(attempt)).sort(), 'every attempt')
      const sentAt = log.map(({ attemptedAt }) => Date.parse(attemptedAt))
      assert.deepEqual(sentAt, [...sentAt].sort((a, b) => b - a), 'newest first')
      for (const attempt of log) {
        if (attempt.result === 'failed') assert.equal(attempt.nextAttemptAt, null)
        else assert.ok(attempt.nextAttemptAt !== null && Date.parse(attempt.nextAttemptAt) > Date.parse(attempt.attemptedAt))
      }
      assert.deepEqual(failedOnly, log.slice(0, 2))
      assert.equal(table.code, 0, table.stderr)
      assert.match(table.stdout, new RegExp(`^The last 6 delivery attempts of webhook endpoint ${id} in .*, newest first:$`, 'm'))
      assert.match(table.stdout, new RegExp(`^${log[0]?.eventId}\\s+pet\\.created\\s+2\\s+${log[0]?.attemptedAt}\\s+answered 500\\s+\\d+ ms\\s+given up$`, 'm'))

      // the receiver is fixed; an instance that polls every 10 minutes runs: what arrives in time was woken by the retry
      receiver.answer(() => 204)
      const metricsPort = await freePort()
      const server = await servers.start({ ...serverEnv, WEBHOOK_POLL_INTERVAL_MS: '600000', METRICS_PORT: String(metricsPort) })
      const retried = await setup.cli('webhooks', 'retry', String(id))
      assert.equal(retried.code, 0, retried.stderr)
      assert.match(retried.stdout, new RegExp(`^Put 3 given-up deliveries of webhook endpoint ${id} back in line in .*; running instances send them now, oldest first\\.$`, 'm'))

      const redelivered = (await receiver.waitFor(9)).slice(6)
      assert.deepEqual(ids(redelivered).map(Number), events, 'oldest first')
      await eventually(async () => (await attempts(setup, id, '--limit', '3')).every(({ result }) => result === 'delivered'), 'the deliveries are logged')
      assert.deepEqual((await attempts(setup, id, '--limit', '3')).map(({ attempt }) => attempt), [3, 3, 3], 'after webhooks retry the attempt numbers go on from 2, not from 1')
      const [endpoint] = (await json<{ endpoints: Array<{ waiting: number, failed: number }> }>(setup, 'webhooks', 'list')).endpoints
      assert.deepEqual({ waiting: endpoint?.waiting, failed: endpoint?.failed }, { waiting: 0, failed: 0 })
      assert.deepEqual(await json(setup, 'webhooks', 'retry', String(id)), { database: setup.database, id, requeued: 0, expired: 0, disabled: false })

      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
      await server.stop()
      assert.match(metrics, new RegExp(`^petstore_webhook_deliveries_total\\{outcome="delivered",endpoint_id="${id}"\\} 3$`, 'm'))
      assert.match(metrics, /^petstore_webhook_delivery_lag_seconds_count 3$/m, 'one lag observation per delivery')
      // delivered after the retries and the given-up time: later than their events by more than the first server's retry
      assert.match(metrics, /^petstore_webhook_delivery_lag_seconds_bucket\{le="0\.05"\} 0$/m)
    })
  })
}
