import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import type { WebhookAttemptRecord } from '../../src/capabilities/webhooks/store/webhook-delivery-log.js'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import type { LogStream } from '../../src/infra/logging/logging.js'
import { buildTestApp, createdPet, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { captureLogs } from '../helpers/log-capture.js'
import { childEnv, runCli } from '../helpers/processes.js'
import { endpointState, eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js'

// The Standard Webhooks manners of retry-policy.ts against a real receiver, read back as an operator does
// (`webhooks deliveries`, `webhooks list`): what is asserted is the order of the requests and the times
// the store recorded, never how fast anything went. One delivery in flight an endpoint, so the order of
// the requests is the order the dispatcher chose; a short poll, so retries coming due are found soon.
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_POLL_INTERVAL_MS: '20', RATE_LIMIT_MAX: '0' }
const THROTTLING = [429, 502, 503, 504]

interface Running {
  api: TestApp
  id: number
  /** Every attempt `webhooks deliveries <id> --json` lists, newest first. */
  attempts: () => Promise<WebhookAttemptRecord[]>
}

/** An app whose retry schedule is `schedule`, with one endpoint for pet.created on `receiver` (`url` at it), its log in `logStream`. */
async function running (t: TestContext, store: StoreKind, receiver: WebhookReceiver, schedule: string, options: { url?: string, logStream?: LogStream } = {}): Promise<Running> {
  const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_RETRY_SCHEDULE: schedule }, ...(options.logStream === undefined ? {} : { logStream: options.logStream }) })
  const url = options.url ?? receiver.url
  const { id } = await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())
  const env = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent' })
  return {
    api,
    id,
    attempts: async () => {
      const listed = await runCli(['webhooks', 'deliveries', String(id), '--json'], env)
      assert.equal(listed.code, 0, listed.stderr)
      return (JSON.parse(listed.stdout) as { attempts: WebhookAttemptRecord[] }).attempts
    }
  }
}

/** Waits until the log holds `count` attempts (a request reaches the receiver before its outcome is recorded), oldest first. */
async function loggedAttempts ({ attempts }: Running, count: number): Promise<WebhookAttemptRecord[]> {
  let logged: WebhookAttemptRecord[] = []
  await eventually(async () => (logged = await attempts()).length >= count, `${count} attempts logged`)
  return logged.reverse()
}

/** Creates two pets, A then B; the receiver's answer to the first request is held until B is committed, so both wait when A fails. */
async function twoEventsFirstAnswered (api: TestApp, receiver: WebhookReceiver, status: number): Promise<[number, number]> {
  let bCommitted = (): void => {}
  const committed = new Promise<void>((resolve) => { bCommitted = resolve })
  receiver.answer((_request, index) => index === 0 ? { respond: (response) => { committed.then(() => response.writeHead(status).end(), () => {}) } } : 204)
  await createdPet(api, { name: 'A', categoryId: 1 })
  await createdPet(api, { name: 'B', categoryId: 1 })
  bCommitted()
  const [a, b] = (await followFeed(api)).events.map((event) => event.id)
  assert.ok(a !== undefined && b !== undefined)
  return [a, b]
}

const webhookIds = (requests: readonly ReceivedWebhook[]): number[] => requests.map((request) => Number(request.headers['webhook-id']))
const at = (iso: string | null): number => {
  assert.ok(iso !== null)
  return Date.parse(iso)
}

for (const store of testStores()) {
  describe(`webhook retry manners against a real receiver (${store})`, () => {
    for (const status of [429, 503]) {
      test(`When a receiver answers ${status} with Retry-After: 2, then the next attempt is recorded 2 s on at least, and the retry comes no sooner, although the schedule says 100 ms`, async (t) => {
        const receiver = await webhookReceiver(t)
        receiver.answer((_request, index) => index === 0 ? { status, headers: { 'retry-after': '2' } } : 204)
        const endpoint = await running(t, store, receiver, '100ms,100ms')

        await createdPet(endpoint.api, { name: 'Rex', categoryId: 1 })
        const [first, retry] = await receiver.waitFor(2) as [ReceivedWebhook, ReceivedWebhook]
        const [answered, delivered] = await loggedAttempts(endpoint, 2) as [WebhookAttemptRecord, WebhookAttemptRecord]

        assert.deepEqual(webhookIds([first, retry]), [answered.eventId, answered.eventId], 'the same event, retried')
        assert.deepEqual([answered.attempt, answered.result, answered.status, answered.error], [1, 'retrying', status, `answered ${status}`])
        assert.ok(at(answered.nextAttemptAt) - at(answered.attemptedAt) >= 2_000, `next attempt recorded ${at(answered.nextAttemptAt) - at(answered.attemptedAt)} ms after the attempt`)
        assert.deepEqual([delivered.attempt, delivered.result, delivered.status, delivered.error], [2, 'delivered', 204, null])
        assert.ok(at(delivered.attemptedAt) >= at(answered.nextAttemptAt), 'the retry was sent before the time recorded')
        assert.ok(retry.at >= at(answered.nextAttemptAt), 'the retry arrived before the time recorded')
        assert.ok(retry.at - first.at >= 2_000, `the retry arrived ${retry.at - first.at} ms after the first attempt`)
      })
    }

    for (const status of THROTTLING) {
      test(`When a receiver answers ${status}, then the whole endpoint waits: the next event is sent only after the failed one's retry`, async (t) => {
        const receiver = await webhookReceiver(t)
        const endpoint = await running(t, store, receiver, '300ms,300ms')

        const [a, b] = await twoEventsFirstAnswered(endpoint.api, receiver, status)
        const requests = await receiver.waitFor(3)
        const [throttled, retried, next] = await loggedAttempts(endpoint, 3) as [WebhookAttemptRecord, WebhookAttemptRecord, WebhookAttemptRecord]

        assert.deepEqual(webhookIds(requests), [a, a, b])
        assert.deepEqual([throttled.eventId, throttled.result, throttled.status], [a, 'retrying', status])
        assert.deepEqual([retried.eventId, retried.result, next.eventId, next.result], [a, 'delivered', b, 'delivered'])
        assert.ok(at(next.attemptedAt) >= at(throttled.nextAttemptAt), 'the next event was sent while the endpoint was to wait')
        assert.ok((requests[2] as ReceivedWebhook).at >= at(throttled.nextAttemptAt))
      })
    }

    test('When a receiver answers 500, then only that delivery waits: the next event is sent at once, before its retry', async (t) => {
      const receiver = await webhookReceiver(t)
      const endpoint = await running(t, store, receiver, '5s')

      const [a, b] = await twoEventsFirstAnswered(endpoint.api, receiver, 500)
      const requests = await receiver.waitFor(2)
      const [failed, next] = await loggedAttempts(endpoint, 2) as [WebhookAttemptRecord, WebhookAttemptRecord]

      assert.deepEqual(webhookIds(requests), [a, b])
      assert.deepEqual([failed.eventId, failed.result, failed.status, next.eventId, next.result], [a, 'retrying', 500, b, 'delivered'])
      assert.ok(at(next.attemptedAt) < at(failed.nextAttemptAt), 'the next event waited for the failed one\'s retry')
    })

    test('When a receiver answers 410 Gone, then the endpoint is disabled, the log says so at warn naming its id and URL (without its query), and `webhooks list` and `webhooks deliveries` say so', async (t) => {
      const receiver = await webhookReceiver(t)
      receiver.answer(() => 410)
      const logs = captureLogs()
      // a receiver that takes a token in its query: no log line may show it
      const endpoint = await running(t, store, receiver, '100ms', { url: `${receiver.url}?token=not-for-the-log`, logStream: logs.stream })
      const env = childEnv({ DATABASE_URL: endpoint.api.databaseUrl, LOG_LEVEL: 'silent' })

      await createdPet(endpoint.api, { name: 'Rex', categoryId: 1 })
      await receiver.waitFor(1)
      await eventually(async () => (await endpointState(endpoint.api, endpoint.id)).disabledAt !== null, 'the endpoint is disabled')
      const listed = await runCli(['webhooks', 'list', '--json'], env)
      const table = await runCli(['webhooks', 'list'], env)
      const [gone] = await loggedAttempts(endpoint, 1) as [WebhookAttemptRecord]

      assert.equal(listed.code, 0, listed.stderr)
      const [shown] = (JSON.parse(listed.stdout) as { endpoints: Array<{ id: number, disabledAt: string | null, waiting: number, lastFailure: string }> }).endpoints
      assert.ok(shown?.disabledAt !== null && shown?.disabledAt !== undefined)
      assert.deepEqual({ id: shown.id, waiting: shown.waiting, lastFailure: shown.lastFailure }, { id: endpoint.id, waiting: 1, lastFailure: 'answered 410' }, 'its delivery waits for it to be enabled')
      assert.match(table.stdout, new RegExp(`^${endpoint.id}\\s.*\\s${shown.disabledAt.replaceAll('.', '\\.')}\\s+1\\s+0\\s`, 'm'), 'the DISABLED column')
      assert.deepEqual([gone.attempt, gone.status, gone.error], [1, 410, 'answered 410'])
      // past the retry the schedule set, and a few polls more: it would have been sent by now
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at(gone.nextAttemptAt) + 200 - Date.now())))
      assert.equal(receiver.received.length, 1, 'nothing more was sent to a disabled endpoint')
      const lines = logs.records().filter((record) => record.endpointId === endpoint.id)
      const disabled = lines.filter((record) => record.msg === `webhook endpoint ${endpoint.id} (${receiver.url}) disabled: it answered 410 Gone; its deliveries wait for webhooks enable ${endpoint.id}`)
      assert.deepEqual(disabled.map((record) => [record.level, record.url, record.disabled]), [[40, receiver.url, true]], 'one warn line naming the endpoint')
      assert.ok(!lines.some((record) => record.level === 30 && /retrying later/.test(String(record.msg))), 'the 410 logged at info as retrying later')
      assert.ok(!logs.lines.some((line) => line.includes('not-for-the-log')), 'the URL\'s query reached the log')
    })
  })
}
