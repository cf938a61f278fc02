import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { describe, test } from 'node:test'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { buildTestApp, createdPet, testStores, type TestApp } from '../helpers/build-app.js'
import { endpointState, eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver, type Answer } from '../helpers/webhook-receiver.js'

// what a receiver may answer, and what the sender makes of it: real receivers on 127.0.0.1, so the
// private-network and http switches are on
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0' }
const REDIRECTS = [301, 302, 303, 307, 308]
// the figure docs/operations.md promises, written out: a test that read the constant would follow it anywhere
const ANSWER_READ_LIMIT_BYTES = 64 * 1024
// an endless answer stops here (and holds the connection open), so a sender that kept reading cannot make it write without end
const ENDLESS_CAP_BYTES = 64 * 1024 * 1024

async function addEndpoint (api: TestApp, url: string): Promise<number> {
  return (await api.app.webhookStore.createWebhookEndpoint({ name: 'receiver', url, eventTypes: ['pet.created'], secret: generateWebhookSecret() }, new Date())).id
}

/** A 200 whose body never ends: `bytes` written (as fast as the reader takes them, up to `cap`), then held open. */
function bodyWithoutEnd (bytes: number): { answer: Answer, written: () => number, closed: Promise<void> } {
  let written = 0
  let onClose = (): void => {}
  const closed = new Promise<void>((resolve) => { onClose = resolve })
  const answer: Answer = {
    respond: (response: ServerResponse) => {
      response.on('close', onClose)
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      const chunk = Buffer.alloc(16 * 1024, 'x')
      const writeMore = (): void => {
        while (written < bytes && !response.destroyed) {
          const part = chunk.subarray(0, Math.min(chunk.length, bytes - written))
          written += part.length
          if (!response.write(part)) {
            response.once('drain', writeMore)
            return
          }
        }
      }
      writeMore()
    }
  }
  return { answer, written: () => written, closed }
}

for (const store of testStores()) {
  describe(`webhook answers (${store})`, () => {
    test('When the receiver answers with a redirect (301, 302, 303, 307, 308), then each is a failed attempt, retried with the same webhook-id, and the Location is never requested', async (t) => {
      const elsewhere = await webhookReceiver(t)
      const receiver = await webhookReceiver(t)
      // each 3xx once, in turn, then a 204
      receiver.answer((_request, index) => {
        const status = REDIRECTS[index]
        return status === undefined ? 204 : { status, headers: { location: elsewhere.url } }
      })
      const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_RETRY_SCHEDULE: REDIRECTS.map(() => '50ms').join(',') } })
      const id = await addEndpoint(api, receiver.url)
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })

      await eventually(async () => {
        const state = await endpointState(api, id)
        return state.lastSuccessAt !== null && state.waiting === 0
      }, 'the delivery is done')

      assert.equal(elsewhere.received.length, 0, 'the Location of a redirect was requested')
      const requests = receiver.received
      assert.equal(requests.length, REDIRECTS.length + 1, 'one attempt per redirect, then the one answered 204')
      assert.equal(new Set(requests.map((request) => request.headers['webhook-id'])).size, 1, 'every attempt carries the same event')
      assert.equal(JSON.parse(requests[0]?.body ?? '{}').data.pet.id, pet.id)
      const state = await endpointState(api, id)
      assert.deepEqual({ failed: state.failed, lastFailure: state.lastFailure, delivered: state.lastSuccessAt !== null }, { failed: 0, lastFailure: 'answered 308', delivered: true })
      const metrics = await api.app.metrics.registry.getSingleMetricAsString('petstore_webhook_deliveries_total')
      assert.match(metrics, new RegExp(`petstore_webhook_deliveries_total\\{outcome="retrying",endpoint_id="${id}"\\} ${REDIRECTS.length}$`, 'm'), 'each redirect counted as a failed attempt')
      assert.match(metrics, new RegExp(`petstore_webhook_deliveries_total\\{outcome="delivered",endpoint_id="${id}"\\} 1$`, 'm'))
    })

    test('When a receiver answers 2xx with a body that never ends, then the sender reads 64 KiB at most, closes the connection, and the attempt is a delivery', async (t) => {
      // the timeout is far from anything this test waits for: an attempt that kept reading would fail with it
      const api = await buildTestApp(t, { store, env: { ...ENV, WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_RETRY_SCHEDULE: '1h' } })
      // exactly the limit and then nothing more: only a sender that stops at 64 KiB is done with it
      const exact = bodyWithoutEnd(ANSWER_READ_LIMIT_BYTES)
      // as much as the sender takes: one that reads on never finishes
      const endless = bodyWithoutEnd(ENDLESS_CAP_BYTES)
      const receivers = await Promise.all([exact, endless].map(async ({ answer }) => {
        const receiver = await webhookReceiver(t)
        receiver.answer(() => answer)
        return { receiver, id: await addEndpoint(api, receiver.url) }
      }))
      await createdPet(api, { name: 'Rex', categoryId: 1 })

      for (const { id } of receivers) {
        await eventually(async () => {
          const state = await endpointState(api, id)
          return state.lastSuccessAt !== null || state.lastFailureAt !== null
        }, `endpoint ${id}'s attempt ends`)
        const state = await endpointState(api, id)
        assert.deepEqual({ waiting: state.waiting, failed: state.failed, lastFailure: state.lastFailure, delivered: state.lastSuccessAt !== null },
          { waiting: 0, failed: 0, lastFailure: null, delivered: true }, `endpoint ${id}: a 2xx is a delivery, whatever follows it`)
      }
      // the sender hung up: the receivers see their answers closed, the endless one long before its cap
      await Promise.all([exact.closed, endless.closed])
      assert.equal(exact.written(), ANSWER_READ_LIMIT_BYTES)
      assert.ok(endless.written() < ENDLESS_CAP_BYTES, `the sender read on: ${endless.written()} bytes written before the connection closed`)
      for (const { receiver } of receivers) assert.equal(receiver.received.length, 1, 'one attempt each')
      t.diagnostic(`the endless answer had written ${endless.written()} bytes (socket buffers included) when the sender closed the connection`)
    })
  })
}
