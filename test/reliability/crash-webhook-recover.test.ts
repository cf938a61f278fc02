import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, loadEnv, sleep, strongApiKey } from '../helpers/live-server.js'
import { freePort, serverProcesses, type ServerProcess } from '../helpers/processes.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'

// A recovery (POST …/recover) across SIGKILL: it queues in one transaction and the queue is in the store, so after
// a restart and the client's repeat of it, every recovered event reaches the receiver, none twice but an attempt
// the kill cut off (one delivery in flight at most: WEBHOOK_ENDPOINT_CONCURRENCY=1)

const EVENTS = 40
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  // one retry, then given up: what a recovery is for
  WEBHOOK_RETRY_SCHEDULE: '100ms',
  WEBHOOK_ENDPOINT_CONCURRENCY: '1',
  WEBHOOK_TIMEOUT_MS: '2000'
}

async function call (server: ServerProcess, key: string, method: string, path: string, body?: unknown): Promise<{ status: number, json: () => Promise<Record<string, unknown>> }> {
  const res = await fetch(`${server.baseUrl}/v1${path}`, {
    method,
    headers: { ...bearer(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, json: async () => await res.json() as Record<string, unknown> }
}

async function until (check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`)
    await sleep(100)
  }
}

const idsOf = (requests: readonly ReceivedWebhook[]): string[] => requests.map((request) => String(request.headers['webhook-id']))

// side by side: each case mostly waits on the receiver and the restart
describe('webhook recovery under SIGKILL', { concurrency: true }, () => {
  for (const store of testStores()) {
    for (const moment of ['as the recovery is asked for', 'while the recovered deliveries are sent'] as const) {
      test(`When the service is SIGKILLed ${moment} (${store}), then after a restart and the recovery asked again, every event failed in the window reaches the receiver, none twice but the one in flight`, async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const writeKey = strongApiKey()
        const adminKey = strongApiKey()
        const env = { ...loadEnv(databaseUrl, writeKey), ...WEBHOOK_ENV, PETSTORE_ADMIN_API_KEYS: adminKey, LOG_LEVEL: 'warn' }
        const receiver = await webhookReceiver(t, await freePort())
        receiver.answer(() => 500)
        let server = await servers.start(env)
        const since = new Date(Date.now() - 1000).toISOString()
        const created = await call(server, adminKey, 'POST', '/webhook-endpoints', { url: receiver.url, events: ['pet.created'] })
        assert.equal(created.status, 201)
        const { id } = await created.json()
        for (let i = 0; i < EVENTS; i++) assert.equal((await call(server, writeKey, 'POST', '/pets', { name: `pet-${i}`, categoryId: i })).status, 201)
        await until(async () => ((await (await call(server, adminKey, 'GET', `/webhook-endpoints/${String(id)}`)).json()).health as { failed: number }).failed === EVENTS, 'every delivery given up')
        const failedAttempts = receiver.received.length
        receiver.answer(() => ({ status: 204, afterMs: 10 }))

        // the recovery, and the kill
        const recovery = call(server, adminKey, 'POST', `/webhook-endpoints/${String(id)}/recover`, { since }).catch(() => undefined)
        if (moment === 'while the recovered deliveries are sent') {
          assert.equal((await recovery)?.status, 202)
          await until(async () => receiver.received.length - failedAttempts >= EVENTS / 3, 'a third of the recovered deliveries sent')
        } else {
          await sleep(Math.floor(Math.random() * 5))
        }
        server.child.kill('SIGKILL')
        await server.waitForExit(5_000)
        await recovery
        const beforeKill = idsOf(receiver.received.slice(failedAttempts))

        // the restart, and the client asking again (it cannot know whether its first request was made)
        server = await servers.start(env)
        const again = await call(server, adminKey, 'POST', `/webhook-endpoints/${String(id)}/recover`, { since })
        assert.equal(again.status, 202)
        const { queued } = await again.json()
        await until(async () => new Set(idsOf(receiver.received.slice(failedAttempts))).size === EVENTS, 'every recovered event delivered')
        await sleep(500)

        const recovered = idsOf(receiver.received.slice(failedAttempts))
        const twice = [...new Set(recovered.filter((eventId, index) => recovered.indexOf(eventId) !== index))]
        t.diagnostic(`${store}, killed ${moment}: ${beforeKill.length} sent before the kill, ${String(queued)} queued again after it, ${recovered.length} requests for ${EVENTS} events; sent twice: ${twice.join(', ') || 'none'}`)
        assert.equal(new Set(recovered).size, EVENTS, 'an event failed in the window was not delivered')
        assert.ok(twice.length <= 1, `sent twice: ${twice.join(', ')}`)
        for (const eventId of twice) assert.ok(beforeKill.includes(eventId), `event ${eventId} was sent twice, not only as the attempt the kill cut off`)
        assert.ok(Number(queued) <= EVENTS - beforeKill.length + 1, `the repeat queued ${String(queued)} though ${beforeKill.length} had been sent`)
      })
    }
  }
})
