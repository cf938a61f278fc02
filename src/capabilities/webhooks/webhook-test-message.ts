import { randomBytes } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'

/** The type of the message `webhooks test` sends: not an event type, never in the feed. */
export const WEBHOOK_TEST_TYPE = 'webhook.test'
/** How a test message's `webhook-id` starts: an event's is digits only, so a receiver that deduplicates by it never drops one for the other. */
export const WEBHOOK_TEST_ID_PREFIX = 'test_'

/** The body of a test message, in the Standard Webhooks payload shape (type, timestamp, data). */
export const WebhookTestMessageSchema = Type.Object({
  type: Type.Literal(WEBHOOK_TEST_TYPE),
  timestamp: Type.String({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$', maxLength: 24, description: 'When it was sent, as RFC 3339 in UTC with milliseconds.' }),
  data: Type.Object({
    endpointId: Type.Integer({ minimum: 1, description: 'The endpoint it was sent to.' }),
    message: Type.String({ description: 'What it is, for whoever reads the receiver\'s log.' })
  }, { additionalProperties: false })
}, {
  $id: 'WebhookTestMessage',
  additionalProperties: false,
  description: 'Sent by `npx petstore webhooks test <id>` and `POST /v1/webhook-endpoints/{endpointId}/test`, signed like every delivery; a receiver that skips types it does not know skips it.'
})
export type WebhookTestMessage = Static<typeof WebhookTestMessageSchema>

/** A test message for `endpointId` as of `now`, with a `webhook-id` of its own. */
export function webhookTestMessage (endpointId: number, now: Date): { id: string, message: WebhookTestMessage } {
  return {
    id: WEBHOOK_TEST_ID_PREFIX + randomBytes(12).toString('base64url'),
    message: {
      type: WEBHOOK_TEST_TYPE,
      timestamp: now.toISOString(),
      data: { endpointId, message: 'A test message (npx petstore webhooks test, or POST /v1/webhook-endpoints/{endpointId}/test): not an event of the feed.' }
    }
  }
}
