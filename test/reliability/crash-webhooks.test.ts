import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Event } from '../helpers/events.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, loadEnv, sleep, strongApiKey } from '../helpers/live-server.js'
import { freePort, runCli, serverProcesses, childEnv } from '../helpers/processes.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

// At least once across SIGKILL: the queue is in the store, so a restarted service delivers what was pending or in flight.

const WEBHOOK_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms', WEBHOOK_TIMEOUT_MS: '2000' }
const PETS = 30

// side by side: each store mostly waits (for the dead lease to run out, for retries), keeping no core busy
describe('webhooks under SIGKILL', { concurrency: true }, () => {
  for (const store of testStores()) {
    describe(`webhooks under SIGKILL (${store})`, () => {
      test('When the service is SIGKILLed with deliveries pending and in flight, then after a restart every event reaches the endpoint', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const apiKey = strongApiKey()
        const env = { ...loadEnv(databaseUrl, apiKey), ...WEBHOOK_ENV }
        const port = await freePort()
        let receiver = await webhookReceiver(t, port)
        // the first requests are held unanswered: they are in flight when the process dies
        receiver.answer(() => 'blackhole')
        const added = await runCli(['webhooks', 'add', receiver.url], childEnv(env))
        assert.equal(added.code, 0, added.stderr)

        let server = await servers.start(env)
        for (let i = 0; i < PETS; i++) {
          const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet-${i}`, categoryId: i }) })
          assert.equal(res.status, 201)
        }
        await receiver.waitFor(1)
        server.child.kill('SIGKILL')
        await server.waitForExit(5_000)
        const inFlight = receiver.received.length
        await receiver.close()

        // a receiver that answers, on the same address, and the service again: the lease of the dead process runs out
        receiver = await webhookReceiver(t, port)
        server = await servers.start(env)
        const feed = await (await fetch(`${server.baseUrl}/v1/events?limit=100`, { headers: bearer(apiKey) })).json() as Event[]
        assert.equal(feed.length, PETS)
        const deadline = Date.now() + 60_000
        const delivered = (): Set<string> => new Set(receiver.received.map((request) => String(request.headers['webhook-id'])))
        while (delivered().size < PETS && Date.now() < deadline) await sleep(100)
        assert.deepEqual([...delivered()].sort(), feed.map((event) => String(event.id)).sort(), 'every event is delivered after the restart')
        t.diagnostic(`${store}: ${inFlight} request(s) in flight at SIGKILL; after the restart ${receiver.received.length} requests delivered all ${PETS} events`)
      })
    })
  }
})
