import type { Config } from '../../infra/config/config.js'
import { componentRefOf, ERROR_MESSAGE_EVENT, eventsExpiredMessage, listEventsQuerySchema, type EventTypeCatalogue, type EventTypeDefinition } from '../events/index.js'
import { describeDelivery, webhookHeaderParameters } from '../webhooks/index.js'

/** What a channel builder makes its part of the AsyncAPI document from. */
export interface AsyncApiContext {
  readonly config: Config
  readonly eventTypes: EventTypeCatalogue
}

/** One way to receive the events (the stream, webhooks, later a bus): its servers, its channel and what a consumer does on it. */
export interface AsyncApiChannel {
  /** The channel's key under `channels`. */
  readonly id: string
  /** Whether this deployment offers the channel (a bus, only where its URL is set); left out: always. */
  configured?: (context: AsyncApiContext) => boolean
  /** Servers only this channel uses, by key (the service's own, `production` and `staging`, are in every document). */
  servers?: (context: AsyncApiContext) => Record<string, unknown>
  /** The channel object, its `messages` included: one per event type, keyed by {@link messageKeyOf}. */
  channel: (context: AsyncApiContext) => Record<string, unknown>
  /** The operations on it, by key: each refers to the channel and its messages as `#/channels/<id>/…`. */
  operations: (context: AsyncApiContext) => Record<string, unknown>
}

/** An event type's message key in a channel: `pet.created` → `petCreated`. */
export function messageKeyOf (type: string): string {
  return type.split(/[._-]/).map((word, i) => i === 0 ? word : `${word.charAt(0).toUpperCase()}${word.slice(1)}`).join('')
}

/** What a channel adds to each event type's message: its headers (framing fields), as a schema and for the example. */
interface MessageFraming {
  headers: (definition: EventTypeDefinition) => Record<string, unknown>
  exampleHeaders: (definition: EventTypeDefinition) => Record<string, string>
  /** How the event travels on this channel, after the type's own description. */
  travels: string
}

/** Each registered event type as a message of a channel: its payload the type's schema (the OpenAPI document's component), with its example. */
function eventMessages (eventTypes: EventTypeCatalogue, framing: MessageFraming): Record<string, unknown> {
  return Object.fromEntries(eventTypes.definitions.map((definition) => [messageKeyOf(definition.type), {
    name: definition.type,
    title: definition.type,
    // the type's own one line (`A pet was added (createPet).`), the schema's description after it
    summary: String((definition.schema.properties as Record<string, { description?: string }> | undefined)?.type?.description ?? definition.type),
    description: `${String(definition.schema.description ?? '')} It is about a ${definition.subject.name}: its id is at \`${definition.subject.idPointer}\` in the event. ${framing.travels}`,
    contentType: 'application/json',
    headers: framing.headers(definition),
    payload: { $ref: componentRefOf(definition.schema) },
    examples: [{ name: messageKeyOf(definition.type), summary: `A \`${definition.type}\` event.`, headers: framing.exampleHeaders(definition), payload: definition.example }],
    'x-stability': 'beta'
  }]))
}

/** The refs of a channel's messages, for its operations. */
export function messageRefs (channelId: string, eventTypes: EventTypeCatalogue): Array<{ $ref: string }> {
  return eventTypes.types.map((type) => ({ $ref: `#/channels/${channelId}/messages/${messageKeyOf(type)}` }))
}

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
    receiveEventStream: {
      action: 'receive',
      channel: { $ref: '#/channels/eventStream' },
      title: 'Follow the changes live',
      summary: 'Receive every event as it is committed, from `after` (or `Last-Event-ID`) on.',
      bindings: { http: { method: 'GET', query: streamQuery(eventTypes), bindingVersion: '0.3.0' } },
      messages: [...messageRefs('eventStream', eventTypes), { $ref: '#/channels/eventStream/messages/streamError' }],
      'x-stability': 'beta'
    }
  })
}

/** The signed POSTs to the endpoints an operator registered (`npx petstore webhooks add`), as the OpenAPI document's `webhooks` describe them. */
export const WEBHOOKS_CHANNEL: AsyncApiChannel = {
  id: 'webhooks',
  servers: () => ({
    webhookEndpoint: {
      host: '{host}',
      pathname: '{path}',
      protocol: 'https',
      description: 'An endpoint an operator registered (`npx petstore webhooks add <url>`): the consumer\'s own HTTPS server, not this service.',
      variables: {
        host: { description: 'The host (and port) of the registered URL.', examples: ['shop.example.com'] },
        path: { description: 'The path of the registered URL.', examples: ['/hooks'] }
      }
    }
  }),
  channel: ({ config, eventTypes }) => {
    const parameters = webhookHeaderParameters()
    return {
      address: null,
      title: 'Webhooks: signed POSTs to registered endpoints',
      summary: 'Each event of the types an endpoint was registered for, POSTed to it and signed (Standard Webhooks).',
      description: `Each event is POSTed to the URL the operator registered for its type, signed as Standard Webhooks specifies. ${describeDelivery(config.webhooks)}`,
      servers: [{ $ref: '#/servers/webhookEndpoint' }],
      messages: eventMessages(eventTypes, {
        headers: () => ({
          type: 'object',
          description: 'The HTTP request headers of every webhook (Standard Webhooks).',
          required: parameters.map(({ name }) => name),
          properties: Object.fromEntries(parameters.map(({ name, description, schema, example }) => [name, { ...schema, description, examples: [example] }]))
        }),
        exampleHeaders: ({ example }) => ({ ...Object.fromEntries(parameters.map(({ name, example }) => [name, example])), 'webhook-id': String(example.id) }),
        travels: 'As a webhook it is the body of one POST; any 2xx answer is a delivery.'
      }),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveWebhooks: {
      action: 'receive',
      channel: { $ref: '#/channels/webhooks' },
      title: 'Receive webhooks',
      summary: 'Receive the events of the types the endpoint was registered for, at least once each; deduplicate by `webhook-id`, order by the event id.',
      bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
      messages: messageRefs('webhooks', eventTypes),
      'x-stability': 'beta'
    }
  })
}

/** The channels this deployment offers, in the document's order (the stream, webhooks, then each configured bus). */
export function channelsOf (context: AsyncApiContext, channels: readonly AsyncApiChannel[]): AsyncApiChannel[] {
  return channels.filter((channel) => channel.configured?.(context) ?? true)
}
