import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { WebhookEndpointRecord } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { manualClock, type ManualClock } from '../helpers/clock.js'
import { followFeed } from '../helpers/events.js'
import { childEnv, runCli } from '../helpers/processes.js'
import { endpointState, eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'

// an endpoint's life over days, on the app's clock (what the dispatcher reads for "now"), with real
// receivers on 127.0.0.1 (so the private-network and http switches are on) and the real CLI
// one delivery in flight an endpoint: the id order checked below is what that setting promises
const ENV = { WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0' }
const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
// the figures docs/operations.md promises, written out: a test that read the constants would follow them anywhere
const DISABLED_AFTER_MS = 3 * DAY_MS
const ROTATION_OVERLAP_MS = 24 * 3_600_000

function moveTo (clock: ManualClock, time: number): void {
  clock.advance(time - clock.now())
}

const iso = (time: number): string => new Date(time).toISOString()

/** Whether `request` carries a Standard Webhooks signature under `secret`, computed here from the specification, whatever its timestamp. */
function signedBy (secret: string, request: ReceivedWebhook): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const content = `${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`
  return String(request.headers['webhook-signature']).split(' ').includes(`v1,${createHmac('sha256', key).update(content).digest('base64')}`)
}

function webhookIds (requests: readonly ReceivedWebhook[]): number[] {
  return requests.map((request) => Number(request.headers['webhook-id']))
}

for (const store of testStores()) {
  describe(`webhook endpoints over days (${store})`, () => {
    test('When an endpoint fails without a single success for 3 days, then its next failure disables it, nothing more is sent to it, and `webhooks enable` (or `webhooks add` of its URL) resumes its waiting deliveries in id order', async (t) => {
      const clock = manualClock()
      const t0 = clock.now()
      // a and c fail throughout; a is enabled again with `webhooks enable`, c with `webhooks add` of its URL
      const failingA = await webhookReceiver(t)
      const failingC = await webhookReceiver(t)
      for (const receiver of [failingA, failingC]) receiver.answer(() => 500)
      // b fails, succeeds once (a day later), then fails again: its 3 days count from the failure after that success
      const recovering = await webhookReceiver(t)
      recovering.answer((_request, index) => index === 1 ? 204 : 500)
      // one endpoint at a time, so moving the clock never lets a second pass take a lease still held; retries a minute apart
      const api = await buildTestApp(t, { store, clock, env: { ...ENV, WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_SCHEDULE: Array(10).fill('1m').join(',') } })
      const add = async (url: string): Promise<number> =>
        (await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url, eventTypes: ['pet.created'], secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, new Date(clock.now()))).id
      const a = await add(failingA.url)
      const b = await add(recovering.url)
      const c = await add(failingC.url)
      const state = async (id: number): Promise<WebhookEndpointRecord> => await endpointState(api, id)
      const allFailedAt = async (time: number): Promise<boolean> =>
        (await Promise.all([a, b, c].map(async (id) => (await state(id)).lastFailureAt === iso(time)))).every(Boolean)

      // t0: all fail their first attempt
      await createdPet(api, { name: 'First', categoryId: 1 })
      await eventually(async () => await allFailedAt(t0), 'every endpoint fails at t0')

      // a day later: a and c fail again; b's one success ends its streak, and the next event starts a new one
      const t1 = t0 + DAY_MS
      moveTo(clock, t1)
      await eventually(async () => (await state(a)).lastFailureAt === iso(t1) && (await state(c)).lastFailureAt === iso(t1) && (await state(b)).lastSuccessAt === iso(t1),
        'a and c fail and b succeeds at t0 + 1 day')
      await createdPet(api, { name: 'Second', categoryId: 2 })
      await eventually(async () => (await state(b)).lastFailureAt === iso(t1), 'b fails the second event at t0 + 1 day')

      // a minute short of 3 days of failing: a and c are still tried
      const t2 = t0 + DISABLED_AFTER_MS - MINUTE_MS
      moveTo(clock, t2)
      await eventually(async () => await allFailedAt(t2), 'every endpoint fails again a minute before 3 days')
      for (const id of [a, c]) assert.equal((await state(id)).disabledAt, null, 'disabled before 3 days of failures')

      // past 3 days: the next failure of a and c disables them; b, failing for 2 days since its success, is not
      const t3 = t0 + DISABLED_AFTER_MS + MINUTE_MS
      moveTo(clock, t3)
      await eventually(async () => await allFailedAt(t3), 'every endpoint fails again after 3 days')
      for (const id of [a, c]) assert.equal((await state(id)).disabledAt, iso(t3), 'not disabled at its first failure after 3 days without a success')
      assert.equal((await state(b)).disabledAt, null, 'disabled although it succeeded within the 3 days')

      // disabled: nothing is sent to them, while b's retries show the dispatcher at work; their queues are kept
      const sentToA = failingA.received.length
      const sentToC = failingC.received.length
      await createdPet(api, { name: 'Third', categoryId: 3 })
      const t4 = t3 + 10 * MINUTE_MS
      moveTo(clock, t4)
      await eventually(async () => (await state(b)).lastFailureAt === iso(t4) && recovering.received.length >= 7, 'b is tried again, its third event too')
      await new Promise((resolve) => setTimeout(resolve, 600))
      assert.deepEqual([failingA.received.length, failingC.received.length], [sentToA, sentToC], 'a request was sent to a disabled endpoint')
      for (const id of [a, c]) {
        assert.deepEqual({ disabledAt: (await state(id)).disabledAt, waiting: (await state(id)).waiting }, { disabledAt: iso(t3), waiting: 3 },
          'a disabled endpoint keeps its queue (two deliveries) and counts the event recorded meanwhile, which enabling it sends')
      }

      // the receivers are fixed; the operator enables the endpoints with the CLI
      for (const receiver of [failingA, failingC]) receiver.answer(() => 204)
      const cliEnv = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent', ...ENV })
      const listed = await runCli(['webhooks', 'list', '--json'], cliEnv)
      assert.equal(listed.code, 0, listed.stderr)
      assert.equal(JSON.parse(listed.stdout).endpoints.find((endpoint: WebhookEndpointRecord) => endpoint.id === a)?.disabledAt, iso(t3), 'webhooks list shows it disabled')
      const enabled = await runCli(['webhooks', 'enable', String(a)], cliEnv)
      assert.equal(enabled.code, 0, enabled.stderr)
      assert.match(enabled.stdout, new RegExp(`^Enabled webhook endpoint ${a} in .*; its waiting deliveries resume\\.$`, 'm'))
      assert.equal((await state(a)).disabledAt, null, 'webhooks enable left the endpoint disabled')
      const readded = await runCli(['webhooks', 'add', failingC.url], cliEnv)
      assert.equal(readded.code, 0, readded.stderr)
      assert.match(readded.stdout, new RegExp(`^Re-enabled webhook endpoint ${c} \\(${failingC.url}\\) in .*; its secret is unchanged\\.$`, 'm'))
      assert.equal((await state(c)).disabledAt, null, 'webhooks add of its URL left the endpoint disabled')
      assert.equal((await api.app.webhookStore.listWebhookEndpoints()).length, 3, 'webhooks add of a disabled endpoint\'s URL added another')
      moveTo(clock, t4 + 10 * MINUTE_MS)
      await eventually(async () => (await Promise.all([a, c].map(async (id) => {
        const resumed = await state(id)
        return resumed.waiting === 0 && resumed.lastSuccessAt !== null
      }))).every(Boolean), 'the enabled endpoints get what waited for them')

      const events = (await followFeed(api)).events.map((event) => event.id)
      assert.equal(events.length, 3)
      assert.deepEqual(webhookIds(failingA.received.slice(sentToA)), events, 'after enable: the waiting deliveries and the event recorded while disabled, each once, in id order')
      assert.deepEqual(webhookIds(failingC.received.slice(sentToC)), events, 'after add of its URL: the waiting deliveries and the event recorded while disabled, each once, in id order')
      for (const id of [a, c]) assert.deepEqual({ disabledAt: (await state(id)).disabledAt, failed: (await state(id)).failed }, { disabledAt: null, failed: 0 })
    })

    test('When a secret is rotated twice with the CLI within 24 hours, then the first secret still verifies beside the second and the newest', async (t) => {
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, env: ENV })
      const cliEnv = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent', ...ENV })
      const added = await runCli(['webhooks', 'add', receiver.url, '--events', 'pet.created', '--json'], cliEnv)
      assert.equal(added.code, 0, added.stderr)
      const { endpoint: { id }, secret: firstSecret } = JSON.parse(added.stdout) as { endpoint: { id: number }, secret: string }
      const secrets = [firstSecret]
      for (let rotation = 1; rotation <= 2; rotation++) {
        const rotated = await runCli(['webhooks', 'rotate-secret', String(id), '--json'], cliEnv)
        assert.equal(rotated.code, 0, rotated.stderr)
        secrets.push((JSON.parse(rotated.stdout) as { secret: string }).secret)
      }

      await createdPet(api, { name: 'After two rotations', categoryId: 1 })
      const [request] = await receiver.waitFor(1) as [ReceivedWebhook]

      assert.equal(String(request.headers['webhook-signature']).split(' ').length, 3, 'one signature per secret still valid')
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
      for (const secret of secrets) assert.deepEqual(new Webhook(secret).verify(request.body, headers), JSON.parse(request.body), 'a Standard Webhooks library accepts each secret')
    })

    test('When a secret is rotated with the CLI, then requests are signed under both secrets until 24 hours have passed, and under the new one alone from then on', async (t) => {
      const clock = manualClock()
      const receiver = await webhookReceiver(t)
      const api = await buildTestApp(t, { store, clock, env: ENV })
      const cliEnv = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent', ...ENV })
      const added = await runCli(['webhooks', 'add', receiver.url, '--events', 'pet.created', '--json'], cliEnv)
      assert.equal(added.code, 0, added.stderr)
      const { endpoint: { id }, secret: oldSecret } = JSON.parse(added.stdout) as { endpoint: { id: number }, secret: string }

      const before = Date.now()
      const rotated = await runCli(['webhooks', 'rotate-secret', String(id), '--json'], cliEnv)
      const after = Date.now()
      assert.equal(rotated.code, 0, rotated.stderr)
      const { secret: newSecret, previousSecretValidUntil } = JSON.parse(rotated.stdout) as { secret: string, previousSecretValidUntil: string }
      const until = Date.parse(previousSecretValidUntil)
      assert.ok(until >= before + ROTATION_OVERLAP_MS && until <= after + ROTATION_OVERLAP_MS, `the old secret signs until ${previousSecretValidUntil}: not 24 h after the rotation`)

      const deliveredAt = async (time: number, name: string): Promise<ReceivedWebhook> => {
        moveTo(clock, time)
        const count = receiver.received.length
        await createdPet(api, { name, categoryId: 1 })
        const request = (await receiver.waitFor(count + 1))[count] as ReceivedWebhook
        assert.equal(request.headers['webhook-timestamp'], String(Math.floor(time / 1000)), 'sent at the time the test set')
        return request
      }

      // right after the rotation: both, and a Standard Webhooks library accepts either secret
      const first = await deliveredAt(after, 'Right after')
      assert.equal(String(first.headers['webhook-signature']).split(' ').length, 2, 'one signature right after the rotation')
      const headers = Object.fromEntries(Object.entries(first.headers).map(([name, value]) => [name, String(value)]))
      assert.deepEqual(new Webhook(newSecret).verify(first.body, headers), new Webhook(oldSecret).verify(first.body, headers))

      // a second before 24 hours have passed: still both
      const late = await deliveredAt(before + ROTATION_OVERLAP_MS - 1_000, 'Just inside')
      assert.equal(String(late.headers['webhook-signature']).split(' ').length, 2, 'one signature before 24 h have passed')
      assert.ok(signedBy(newSecret, late) && signedBy(oldSecret, late), 'both secrets sign until 24 h have passed')

      // 24 hours after the rotation: the new secret alone
      const past = await deliveredAt(until, 'Past the window')
      assert.equal(String(past.headers['webhook-signature']).split(' ').length, 1, 'two signatures 24 h after the rotation')
      assert.ok(signedBy(newSecret, past), 'the new secret signs')
      assert.ok(!signedBy(oldSecret, past), 'the old secret still signs 24 h after the rotation')
    })
  })
}
