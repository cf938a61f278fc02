import type { WebhookSettings } from '../../infra/config/config.js'
import type { WebhookDeliveryLog } from './store/webhook-delivery-log.js'
import { WEBHOOK_TEST_TYPE, webhookTestMessage } from './webhook-test-message.js'

/** What a test message came to: `webhooks test --json` prints it, `POST …/test` answers it. */
export interface TestMessageOutcome {
  id: number
  url: string
  /** The message's `webhook-id`: `test_…`, never an event's. */
  webhookId: string
  type: typeof WEBHOOK_TEST_TYPE
  disabled: boolean
  delivered: boolean
  /** The receiver's status, when it answered. */
  status: number | null
  /** Why it was not delivered (`answered 500`, `timed out`, `refused: …`); null when delivered. */
  error: string | null
  durationMs: number
}

/**
 * Sends the endpoint one `webhook.test` message now with the sender deliveries use (its signing, address rules
 * and timeout; also to a disabled endpoint), and says what came of it. Undefined when no endpoint has this id.
 * Nothing is queued, retried or logged: it is not an event.
 */
export async function sendTestMessage (deliveryLog: WebhookDeliveryLog, id: number, settings: WebhookSettings, now: Date): Promise<TestMessageOutcome | undefined> {
  const target = await deliveryLog.findWebhookTestTarget(id, now)
  if (target === undefined) return undefined
  const { message, id: webhookId } = webhookTestMessage(id, now)
  // loaded only for a test: undici comes with it
  const { WebhookSender } = await import('./webhook-sender.js')
  const sender = new WebhookSender(settings)
  const started = performance.now()
  try {
    const sent = await sender.post({ url: target.url, id: webhookId, body: JSON.stringify(message), secrets: target.secrets }, now, new AbortController().signal)
    return {
      id,
      url: target.url,
      webhookId,
      type: WEBHOOK_TEST_TYPE,
      disabled: target.disabled,
      delivered: sent.delivered,
      status: sent.status ?? null,
      error: sent.delivered ? null : sent.error,
      durationMs: Math.round(performance.now() - started)
    }
  } finally {
    await sender.close()
  }
}
