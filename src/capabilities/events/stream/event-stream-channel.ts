import { eventsExpiredMessage } from '../event-expiry.js'
import { eventMessages, receiveOperation, type AsyncApiChannel } from '../event-channels.js'
import { listEventsQuerySchema } from '../event-schemas.js'
import type { EventTypeCatalogue } from '../event-types.js'
import { ERROR_MESSAGE_EVENT } from './sse-format.js'

// the feed's own parameters, as the stream takes them (the page's `limit` has no meaning on a stream)
function streamQuery (eventTypes: EventTypeCatalogue): Record<string, unknown> {
  const { after, type } = (JSON.parse(JSON.stringify(listEventsQuerySchema(eventTypes))) as { properties: Record<string, Record<string, unknown>> }).properties
  // OpenAPI's parameter serialization keywords are no JSON Schema
  const { style: _style, explode: _explode, ...types } = type ?? {}
  return { type: 'object', additionalProperties: false, properties: { after, type: types } }
}

/** The stream's one message that is no event: its last, when retention passed it while it was behind. */
const STREAM_ERROR_MESSAGE = {
  streamError: {
    name: ERROR_MESSAGE_EVENT,
    title: 'The stream ends: events were deleted after its position',
    summary: 'The 410 `events_expired` of the JSON feed, as the stream\'s last message.',
    description: 'When retention deletes events after the position of a stream that is behind (a slow consumer catching up), the stream sends ' +
      `no event after the gap: its last message is \`event: ${ERROR_MESSAGE_EVENT}\`, with no \`id:\` (so \`Last-Event-ID\` stays the last event received), whose ` +
      '`data:` is the `Error` the 410 `events_expired` carries, byte for byte; then the stream ends. Resynchronize from the catalogue ' +
      '(`listPets`), then follow again: reconnecting with `Last-Event-ID` answers that 410. A browser\'s `EventSource` hands it to its `error` ' +
      'listeners as a `MessageEvent` whose `data` is the Error (its own connection errors carry none).',
    contentType: 'application/json',
    headers: {
      type: 'object',
      description: 'The Server-Sent Events fields of the message besides `data:`: `event:` alone.',
      required: ['event'],
      properties: { event: { type: 'string', const: ERROR_MESSAGE_EVENT, description: 'The `event:` field.' } }
    },
    payload: { $ref: '#/components/schemas/Error' },
    examples: [{
      name: 'eventsExpired',
      summary: 'Retention deleted events 8 to 1200 while the stream was at 7.',
      headers: { event: ERROR_MESSAGE_EVENT },
      payload: { code: 'events_expired', message: eventsExpiredMessage(7, 1200, 1201), status: 410 }
    }],
    'x-stability': 'beta'
  }
}

/** `GET /v1/events` with `Accept: text/event-stream`: the feed as Server-Sent Events. */
export const EVENT_STREAM_CHANNEL: AsyncApiChannel = {
  id: 'eventStream',
  channel: ({ config, eventTypes }) => ({
    address: '/events',
    title: 'The change feed as a stream (Server-Sent Events)',
    summary: 'Every event, pushed as it is committed, in id order.',
    description: '`GET /v1/events` with `Accept: text/event-stream` and a key (`Authorization: Bearer …`; a `read` key is enough) answers a ' +
      'Server-Sent Events stream (WHATWG HTML, "Server-sent events") instead of a page. Each event is one message: `id:` the event id, `event:` its type, ' +
      '`data:` the event as the feed\'s page holds it (one line of JSON, integers beyond 2^53 written digit for digit). `after` and `type` select as on a page. ' +
      'After a dropped connection, reconnect with `Last-Event-ID: <the last id received>` (it wins over `after`): the stream resumes after it, so nothing is missed ' +
      'and nothing is seen twice. A position that retention has passed is answered 410 `events_expired` before any stream starts ' +
      `(events are kept ${config.eventRetentionDays} days here); a stream that retention passes while it is behind ends with the \`streamError\` message. ` +
      'Comment lines (`:`) keep an idle connection open through proxies: ignore them. ' +
      'Follow it with `curl -N -H "Accept: text/event-stream" -H "Authorization: Bearer $KEY" <server>/v1/events`.',
    servers: [{ $ref: '#/servers/production' }, ...(config.stagingBaseUrl === undefined ? [] : [{ $ref: '#/servers/staging' }])],
    messages: {
      ...eventMessages(eventTypes, {
        headers: ({ type }) => ({
          type: 'object',
          description: 'The Server-Sent Events fields of the message besides `data:` (no HTTP headers: one response carries every message).',
          required: ['id', 'event'],
          properties: {
            id: { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16, description: 'The `id:` field: the event\'s id, to send back as `Last-Event-ID` to resume after it.' },
            event: { type: 'string', const: type, description: 'The `event:` field: the event\'s type.' }
          }
        }),
        exampleHeaders: ({ type, example }) => ({ id: String(example.id), event: type }),
        travels: 'On the stream it is one Server-Sent Events message: `id:` its id, `event:` its type, `data:` the event.'
      }),
      ...STREAM_ERROR_MESSAGE
    },
    'x-stability': 'beta'
  }),
  operations: ({ eventTypes }) => ({
    receiveEventStream: receiveOperation('eventStream', eventTypes, {
      title: 'Follow the changes live',
      summary: 'Receive every event as it is committed, from `after` (or `Last-Event-ID`) on.',
      bindings: { http: { method: 'GET', query: streamQuery(eventTypes), bindingVersion: '0.3.0' } },
      moreMessages: [{ $ref: '#/channels/eventStream/messages/streamError' }]
    })
  })
}
