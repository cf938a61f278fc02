import { Type } from '@sinclair/typebox'
import { RETRY_AFTER_SECONDS } from '../../../infra/errors/catalogue.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import { MAX_EVENT_ID } from '../../../infra/schemas/event-envelope.js'
import { errorResponse, RETRY_AFTER_HEADER } from '../../../infra/schemas/responses.js'
import type { Event } from '../event-types.js'
import { ERROR_MESSAGE_EVENT, eventMessage, EVENT_STREAM_MEDIA_TYPE, HEARTBEAT, STREAM_OPENING, STREAM_RETRY_MS } from './sse-format.js'
import { STREAM_CAP_RETRY_AFTER_SECONDS } from './stream-slots.js'

// What the OpenAPI document says of the stream: its request header, its media type, and the answers that refuse one.

/** Request headers of `listEvents` (names in lower case: Node hands them to validation so). */
export const ListEventsHeadersSchema = Type.Object({
  'last-event-id': Type.Optional(Type.Integer({
    format: 'int64',
    minimum: 0,
    maximum: MAX_EVENT_ID,
    description: 'With `Accept: text/event-stream`: the id of the last event received, which an `EventSource` sends when it reconnects; ' +
      `the stream resumes after it, and it wins over \`after\`. Plain decimal digits, at most ${MAX_EVENT_ID} (2^53−1, the largest id an event can have); ` +
      'anything else is 400 `invalid_request` naming it. A page (JSON) ignores it.',
    examples: [41]
  }))
})

/** The 200's second media type: the stream, its example showing `example` (the first registered type's). */
export function eventStreamContent (example: Event): Record<string, unknown> {
  const streamExample = STREAM_OPENING.toString('utf8') + eventMessage(example.id, example.type, stringifyJson(example)).toString('utf8') + HEARTBEAT.toString('utf8')
  return {
    [EVENT_STREAM_MEDIA_TYPE]: {
      // no type: the stream has no length to bound (a `string` would need a maxLength), and JSON Schema says nothing of its lines
      schema: {
        description: `Server-Sent Events (WHATWG HTML), UTF-8, sent as they happen and never ending on its own. It opens with \`retry: ${STREAM_RETRY_MS}\` ` +
          '(the reconnection delay, in ms) and a comment line. Each event is one message: `id:` the event id, `event:` its type, `data:` the event ' +
          'as one line of JSON, exactly as a page holds it (the `Event` schema), then a blank line. Lines starting with `:` are comments ' +
          '(the heartbeat, sent every `EVENT_STREAM_HEARTBEAT_SECONDS`): ignore them. When retention deletes events after the position of a stream ' +
          `that is behind (a slow consumer catching up), the stream sends no event after the gap: its last message is \`event: ${ERROR_MESSAGE_EVENT}\` ` +
          'with no `id:`, whose `data:` is the `Error` the 410 `events_expired` carries, and then it ends; resuming with `Last-Event-ID` is that 410.'
      },
      example: streamExample
    }
  }
}

/** What the operation's description adds about the stream. */
export const LIST_EVENTS_STREAM_DESCRIPTION = 'With `Accept: text/event-stream` (and `curl -N`, or an `EventSource`), the answer is instead a stream ' +
  'that does not end: the events after `after` (or after `Last-Event-ID`, which wins), then each new event as soon as it is committed, on ' +
  'whichever instance; `type` filters it as it filters pages, and `limit` is ignored. A position retention has passed is the same 410, ' +
  'as JSON, before the stream starts; a stream retention passes while it is behind ends with that 410\'s Error as its last message (`event: error`). A consumer that stops reading is cut once its unsent backlog passes `EVENT_STREAM_MAX_BACKLOG_KIB`; ' +
  'when the instance shuts down its streams end cleanly. Either way, reconnect with `Last-Event-ID`: no event is missed or repeated. ' +
  'A stream counts once against the rate limit, at its start.'

/** The 429 of listEvents: the rate limit, or the key's open streams. */
export const STREAM_CAP_429 = errorResponse('Over a rate limit (`rate_limited`): the API key\'s request limit, too many failed authentications from ' +
  'this address (only requests whose key fails are refused for that), or, for a stream, the key already has `EVENT_STREAM_MAX_PER_KEY` streams ' +
  'open on this instance; retry after `Retry-After` seconds.', {
  'Retry-After': {
    type: 'string',
    description: `Seconds until the limit's window resets; ${STREAM_CAP_RETRY_AFTER_SECONDS} when the key's streams are at their cap.`,
    pattern: '^[0-9]{1,6}$',
    maxLength: 6,
    example: String(STREAM_CAP_RETRY_AFTER_SECONDS)
  }
})

/** The 503 of listEvents: the store, the shutdown, overload, or the instance's open streams. */
export const STREAM_CAP_503 = errorResponse('The store is unreachable or the instance is shutting down (`service_unavailable`), or, for a stream, ' +
  `the instance already has \`EVENT_STREAM_MAX_PER_INSTANCE\` streams open (\`service_unavailable\`: retry after ${RETRY_AFTER_SECONDS} s, here or on another ` +
  'instance), or the instance is overloaded and turned the request away unread (`overloaded`); retry after `Retry-After` seconds.', { 'Retry-After': RETRY_AFTER_HEADER })
