import assert from 'node:assert/strict'
import type { WebhookEndpointRecord } from '../../src/capabilities/webhooks/store/webhook-store.js'
import type { TestApp } from './build-app.js'

/** An endpoint as `webhooks list` shows it (fails when none has the id). */
export async function endpointState (api: TestApp, id: number): Promise<WebhookEndpointRecord> {
  const endpoint = (await api.app.webhookStore.listWebhookEndpoints()).find((candidate) => candidate.id === id)
  assert.ok(endpoint !== undefined)
  return endpoint
}

/** Waits until `check` holds (the dispatcher works in the background), or fails after `timeoutMs`: a bound against a hang, not a speed. */
export async function eventually (check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
