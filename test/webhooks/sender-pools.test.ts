import assert from 'node:assert/strict'
import { test } from 'node:test'
import { generateWebhookSecret } from '../../src/capabilities/webhooks/signature.js'
import { WebhookSender } from '../../src/capabilities/webhooks/webhook-sender.js'
import { loadConfig } from '../../src/infra/config/config.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

// The sender's connections per endpoint live only while the endpoint is sent to: an old URL's and a deleted endpoint's close
const SETTINGS = loadConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).webhooks
// far below undici's own keep-alive (4 s): a connection closed sooner was closed by the sender
const IDLE_MS = 300

async function sendTo (sender: WebhookSender, endpointId: number, url: string): Promise<boolean> {
  const at = new Date()
  const sent = await sender.post({ endpointId, url, id: '1', body: JSON.stringify({ id: 1, type: 'pet.created', occurredAt: at.toISOString(), data: {} }), secrets: [generateWebhookSecret()] }, at, new AbortController().signal)
  return sent.delivered
}

test('When an endpoint\'s URL changes, then the sender closes its connections to the old URL and holds one pool for the endpoint', async (t) => {
  const before = await webhookReceiver(t)
  const after = await webhookReceiver(t)
  const sender = new WebhookSender(SETTINGS)
  t.after(async () => { await sender.close() })

  assert.ok(await sendTo(sender, 1, before.url))
  assert.equal(before.connections, 1, 'the connection is kept alive after the delivery')
  assert.ok(await sendTo(sender, 1, after.url))

  assert.equal(sender.poolCount, 1)
  await eventually(async () => before.connections === 0, 'the old URL\'s connection is closed')
  assert.equal(after.connections, 1)
})

test('When an endpoint is sent nothing for the idle time (deleted, say), then its pool is closed and dropped; one still sent to keeps its own', async (t) => {
  const gone = await webhookReceiver(t)
  const kept = await webhookReceiver(t)
  const sender = new WebhookSender(SETTINGS, { idleMs: IDLE_MS })
  t.after(async () => { await sender.close() })

  assert.ok(await sendTo(sender, 1, gone.url))
  const lastSent = Date.now()
  assert.ok(await sendTo(sender, 2, kept.url))
  assert.equal(sender.poolCount, 2)
  // endpoint 2 goes on being sent to; endpoint 1 is sent nothing more
  while (sender.poolCount > 1 && Date.now() - lastSent < 10 * IDLE_MS) {
    assert.ok(await sendTo(sender, 2, kept.url))
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 10))
  }
  const idle = Date.now() - lastSent

  t.diagnostic(`the idle endpoint's pool was dropped after ${idle} ms`)
  assert.equal(sender.poolCount, 1, `the idle endpoint's pool is still held after ${idle} ms`)
  assert.ok(idle >= IDLE_MS, `dropped after ${idle} ms, before it was idle for ${IDLE_MS} ms`)
  await eventually(async () => gone.connections === 0, 'the idle endpoint\'s connection is closed')
  assert.ok(kept.connections > 0, 'the endpoint still sent to keeps its connections')
})
