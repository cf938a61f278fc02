import { Type, type TInteger } from '@sinclair/typebox'

// what every event has besides its type and data, whichever capability records it

/**
 * The largest id an event can have, 2^53−1: the events' identity stops there (PostgreSQL's `MAXVALUE`; SQLite
 * would need 2^53 inserts first), so every event id, and every position in the feed, is exact in a JavaScript
 * number and in an `EventSource`'s `lastEventId`.
 */
export const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER

/** An event's id: a positive integer, increasing in the order the changes were committed. */
export function eventIdSchema (options: { description: string, examples?: number[] }): TInteger {
  return Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_EVENT_ID, ...options })
}

/** What an event's `id` is, as the document says it. */
export const EVENT_ID_DESCRIPTION = `The event's id: a positive integer, at most ${MAX_EVENT_ID} (2^53−1), so exact in a JavaScript number. ` +
  'Ids increase in the order the changes were committed: once a reader has seen an event, no event with a smaller id appears later. Ids may skip numbers.'
/** The document's example time of an event. */
export const OCCURRED_AT_EXAMPLE = '2026-11-25T09:30:00.000Z'
/** An event's `occurredAt`. */
export const occurredAtSchema = Type.String({
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  maxLength: 24,
  description: 'When the change was committed, as RFC 3339 in UTC with milliseconds. Instances\' clocks may differ slightly: order events by `id`, not by this time.',
  examples: [OCCURRED_AT_EXAMPLE]
})
