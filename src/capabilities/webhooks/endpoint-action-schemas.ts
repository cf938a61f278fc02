import { Type, type Static } from '@sinclair/typebox'
import { PAGE_LIMIT_MAX } from '../../infra/http/paged-list.js'
import { int64Schema } from '../../infra/schemas/int64-schema.js'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { ENDPOINT_EXAMPLE } from './webhook-endpoint-schemas.js'
import { WEBHOOK_TEST_TYPE } from './webhook-test-message.js'

// what the actions on an endpoint's deliveries take and answer: a test message, its attempts, a resend, a recovery

const endpointIdSchema = Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The endpoint.', examples: [3] })
// an attempt's time in ms: at most the longest an attempt may take (WEBHOOK_TIMEOUT_MS: 60 s), with room
const durationSchema = (description: string, example: number) => Type.Integer({ format: 'int32', minimum: 0, maximum: 3_600_000, description, examples: [example] })

const TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$'
const time = (description: string, example: string) => Type.String({ format: 'date-time', pattern: TIME_PATTERN, maxLength: 24, description, examples: [example] })
const eventIdOf = (description: string, example: number) => Type.Unsafe<number>(int64Schema({ minimum: 1n, description, examples: [example] }))
const EVENT_EXAMPLE_ID = 42
const count = (description: string, example: number) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] })
const status = Type.Integer({ format: 'int32', minimum: 100, maximum: 599, description: 'The receiver\'s HTTP status, when it answered.', examples: [204] })
const error = Type.String({ maxLength: 500, description: 'Why it was not delivered: `answered 500`, `timed out`, `ECONNREFUSED`, `refused: …` (an address the rules refuse).', examples: ['answered 503'] })

export const WebhookTestResultSchema = Type.Object({
  endpointId: { ...endpointIdSchema, description: 'The endpoint it was sent to.' },
  url: Type.String({ maxLength: 2000, description: 'Where it was sent.', examples: [ENDPOINT_EXAMPLE.url] }),
  webhookId: Type.String({ pattern: '^test_[A-Za-z0-9_-]{16}$', maxLength: 21, description: 'Its `webhook-id`: `test_…`, never an event\'s (digits only).', examples: ['test_Zk3Qm9x0aB1cD2eF'] }),
  type: Type.Literal(WEBHOOK_TEST_TYPE, { description: 'Its `type`: not an event type; it is not in the feed, not retried, not among the attempts.' }),
  disabled: Type.Boolean({ description: 'The endpoint is disabled: a test is sent anyway, its deliveries are not.', examples: [false] }),
  delivered: Type.Boolean({ description: 'The receiver answered 2xx.', examples: [true] }),
  status: Type.Optional(status),
  error: Type.Optional(error),
  durationMs: durationSchema('How long the attempt took, in ms.', 48)
}, {
  $id: 'WebhookTestResult',
  additionalProperties: false,
  examples: [{ endpointId: ENDPOINT_EXAMPLE.id, url: ENDPOINT_EXAMPLE.url, webhookId: 'test_Zk3Qm9x0aB1cD2eF', type: WEBHOOK_TEST_TYPE, disabled: false, delivered: true, status: 204, durationMs: 48 }],
  description: 'What one signed `webhook.test` message came to, sent now as deliveries are sent (same signing, address rules and timeout).'
})
export type WebhookTestResult = Static<typeof WebhookTestResultSchema>

const ATTEMPT_EXAMPLE = {
  eventId: EVENT_EXAMPLE_ID,
  eventType: 'pet.created',
  attempt: 2,
  attemptedAt: '2026-11-25T09:40:57.003Z',
  result: 'retrying',
  status: 503,
  error: 'answered 503',
  durationMs: 31,
  nextAttemptAt: '2026-11-25T09:45:57.003Z'
} as const

export const WebhookAttemptSchema = Type.Object({
  eventId: eventIdOf('The event sent.', EVENT_EXAMPLE_ID),
  eventType: Type.Optional(Type.String({ maxLength: 100, description: 'Its type; absent once retention has deleted the event.', examples: ['pet.created'] })),
  attempt: Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000, description: 'The attempt\'s number for this event (it goes on after a resend or a recovery: 4, 5 … after three).', examples: [2] }),
  attemptedAt: time('When it was sent, as RFC 3339 in UTC with milliseconds.', ATTEMPT_EXAMPLE.attemptedAt),
  result: Type.Unsafe<'delivered' | 'retrying' | 'failed'>({
    type: 'string', enum: ['delivered', 'retrying', 'failed'], description: '`delivered`; `retrying`: failed, tried again at `nextAttemptAt`; `failed`: failed and given up.', examples: ['retrying']
  }),
  status: Type.Optional(status),
  error: Type.Optional(error),
  durationMs: durationSchema('How long it took, in ms.', 31),
  nextAttemptAt: Type.Optional(time('When the delivery is tried again (`retrying` only); never sooner than the receiver\'s `Retry-After`.', ATTEMPT_EXAMPLE.nextAttemptAt))
}, { $id: 'WebhookAttempt', additionalProperties: false, examples: [ATTEMPT_EXAMPLE], description: 'One delivery attempt to the endpoint.' })

export const WebhookAttemptsSchema = Type.Array(Type.Ref(WebhookAttemptSchema), {
  $id: 'WebhookAttempts',
  maxItems: PAGE_LIMIT_MAX,
  examples: [[ATTEMPT_EXAMPLE]],
  description: `Attempts, newest first, at most ${PAGE_LIMIT_MAX} (one page). They are kept as long as their events.`
})

export const WebhookResendSchema = Type.Object({
  eventId: Type.Unsafe<number | bigint>(int64Schema({ minimum: 1n, description: 'The event to send again: one of a type the endpoint receives, still retained.', examples: [EVENT_EXAMPLE_ID] }))
}, { $id: 'WebhookResend', additionalProperties: false, examples: [{ eventId: EVENT_EXAMPLE_ID }], description: 'The event to send the endpoint again.' })

export const WebhookResentSchema = Type.Object({
  endpointId: endpointIdSchema,
  eventId: eventIdOf('The event, due now.', EVENT_EXAMPLE_ID),
  attempt: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000, description: 'The number its next attempt will have; absent when the event was not scheduled for the endpoint yet (recorded a moment ago): it is sent in its turn.', examples: [3] }))
}, {
  $id: 'WebhookResent',
  additionalProperties: false,
  examples: [{ endpointId: ENDPOINT_EXAMPLE.id, eventId: EVENT_EXAMPLE_ID, attempt: 3 }],
  description: 'The event is in line for the endpoint, due now, before its later events, with the whole retry schedule.'
})

// RFC 3339 with a time zone; the window's rules (within retention, until after since) are checked beside it
const dateTimeInput = (description: string, example: string) => Type.String({
  maxLength: 40,
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$',
  [PATTERN_DESCRIPTION_KEYWORD]: 'an RFC 3339 date-time with a time zone, such as 2026-11-25T00:00:00Z',
  description,
  examples: [example]
})

export const WebhookRecoverySchema = Type.Object({
  since: dateTimeInput('From when (RFC 3339, with a time zone): the attempts sent from then on; within the events\' retention, not in the future.', '2026-11-25T00:00:00Z'),
  until: Type.Optional(dateTimeInput('Until when (RFC 3339, exclusive), after `since`; now when left out.', '2026-11-25T12:00:00Z'))
}, { $id: 'WebhookRecovery', additionalProperties: false, examples: [{ since: '2026-11-25T00:00:00Z' }], description: 'The window of failed attempts to recover.' })

export const WebhookRecoveredSchema = Type.Object({
  endpointId: endpointIdSchema,
  since: time('The window\'s start.', '2026-11-25T00:00:00.000Z'),
  until: time('The window\'s end (exclusive).', '2026-11-25T12:00:00.000Z'),
  queued: count('Deliveries put back in line: every event the endpoint failed or gave up on in the window, not delivered since.', 12),
  firstEventId: Type.Optional(eventIdOf('The smallest of their events\' ids; absent when none was queued.', 31)),
  lastEventId: Type.Optional(eventIdOf('The largest; absent when none was queued.', 97))
}, {
  $id: 'WebhookRecovered',
  additionalProperties: false,
  examples: [{ endpointId: ENDPOINT_EXAMPLE.id, since: '2026-11-25T00:00:00.000Z', until: '2026-11-25T12:00:00.000Z', queued: 12, firstEventId: 31, lastEventId: 97 }],
  description: 'What the recovery put back in line, in one transaction: the deliveries are sent in the background, in event-id order, each once.'
})

/** The schemas of the actions, in the order they become the document's components. */
export const ENDPOINT_ACTION_SCHEMAS = [WebhookTestResultSchema, WebhookAttemptSchema, WebhookAttemptsSchema, WebhookResendSchema, WebhookResentSchema, WebhookRecoverySchema, WebhookRecoveredSchema] as const
