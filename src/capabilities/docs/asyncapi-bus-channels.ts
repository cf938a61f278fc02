import type { Config } from '../../infra/config/config.js'
import { componentRefOf, subjectIdOf, type EventTypeCatalogue, type EventTypeDefinition } from '../events/index.js'
import { messageKeyOf, messageRefs, type AsyncApiChannel } from './asyncapi-channels.js'

// The message buses (docs/buses.md), as channels of the AsyncAPI document: each only where its URL is set, its server
// the broker (host only: the URL's credentials never reach a document), each event type one CloudEvent message.

const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json'

/** The broker's host and port, from its URL without the credentials. */
function brokerHost (url: string): string {
  return new URL(url).host
}

/** A CloudEvent 1.0 (structured JSON mode) carrying an event of `definition`'s type: its `data` is the event's `data`. */
function cloudEventSchema (definition: EventTypeDefinition): Record<string, unknown> {
  return {
    type: 'object',
    description: 'A CloudEvent 1.0 in structured JSON mode (cloudevents.io): the event\'s attributes, and its `data` exactly as the feed holds it.',
    required: ['specversion', 'id', 'source', 'type', 'time', 'subject', 'datacontenttype', 'data'],
    properties: {
      specversion: { type: 'string', const: '1.0' },
      id: { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16, description: 'The event id, as a string: deduplicate by it, order by it as a number.' },
      source: { type: 'string', format: 'uri', maxLength: 2000, description: 'The service\'s public base URL (`PUBLIC_BASE_URL`).' },
      type: { type: 'string', const: definition.type },
      time: { type: 'string', format: 'date-time', maxLength: 40, description: 'When the change was committed (the event\'s `occurredAt`).' },
      subject: { type: 'string', pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, description: `The ${definition.subject.name}'s id (\`${definition.subject.idPointer}\` in the event).` },
      datacontenttype: { type: 'string', const: 'application/json' },
      data: { $ref: `${componentRefOf(definition.schema)}/properties/data` }
    }
  }
}

/** `definition`'s example, as the bus carries it. */
function cloudEventExample (definition: EventTypeDefinition, source: string): Record<string, unknown> {
  const { example } = definition
  return {
    specversion: '1.0',
    id: String(example.id),
    source,
    type: definition.type,
    time: example.occurredAt,
    subject: String(subjectIdOf(definition, example)),
    datacontenttype: 'application/json',
    data: example.data
  }
}

/** Each registered type as a CloudEvent message of a bus channel. */
function busMessages (config: Config, eventTypes: EventTypeCatalogue, travels: string, bindings: (definition: EventTypeDefinition) => Record<string, unknown>,
  headers: (definition: EventTypeDefinition) => { schema: Record<string, unknown>, example: Record<string, string> }): Record<string, unknown> {
  return Object.fromEntries(eventTypes.definitions.map((definition) => [messageKeyOf(definition.type), {
    name: definition.type,
    title: definition.type,
    summary: `A \`${definition.type}\` event as a CloudEvent.`,
    description: `${String(definition.schema.description ?? '')} ${travels}`,
    contentType: CLOUDEVENTS_CONTENT_TYPE,
    headers: headers(definition).schema,
    payload: cloudEventSchema(definition),
    bindings: bindings(definition),
    examples: [{ name: messageKeyOf(definition.type), summary: `A \`${definition.type}\` CloudEvent.`, headers: headers(definition).example, payload: cloudEventExample(definition, config.publicBaseUrl) }],
    'x-stability': 'beta'
  }]))
}

const ORDERING = 'Published in event-id order, at least once: after a broker outage or a publisher\'s crash an event may come again; deduplicate by its `id`.'

/** The events in a JetStream stream, one subject per type (`NATS_URL`). */
export const NATS_CHANNEL: AsyncApiChannel = {
  id: 'nats',
  configured: ({ config }) => config.buses.nats !== undefined,
  servers: ({ config }) => config.buses.nats === undefined
    ? {}
    : { nats: { host: brokerHost(config.buses.nats.url), protocol: 'nats', description: `NATS with JetStream (\`NATS_URL\`): the stream \`${config.buses.nats.stream}\`.` } },
  channel: ({ config, eventTypes }) => {
    const nats = config.buses.nats
    return {
      address: `${nats?.subjectPrefix ?? 'petstore.events'}.{eventType}`,
      title: 'NATS JetStream: one subject per event type',
      summary: 'Every event, as a CloudEvent, on the subject of its type.',
      description: `Every event is published to \`${nats?.subjectPrefix ?? 'petstore.events'}.<type>\` in the JetStream stream \`${nats?.stream ?? 'PETSTORE_EVENTS'}\` ` +
        `(subjects \`${nats?.subjectPrefix ?? 'petstore.events'}.>\`, file storage), its publish acknowledged before the bus's position moves. ${ORDERING} ` +
        'JetStream also drops a republished event within its duplicate window (`Nats-Msg-Id`). Bind a consumer with `nats consumer add` (docs/buses.md).',
      parameters: { eventType: { enum: [...eventTypes.types], description: 'The event type, as the subject\'s last tokens (`pet.created`).' } },
      servers: [{ $ref: '#/servers/nats' }],
      messages: busMessages(config, eventTypes, 'On NATS it is one JetStream message on its type\'s subject.', () => ({}), (definition) => ({
        schema: {
          type: 'object',
          required: ['Nats-Msg-Id', 'content-type'],
          properties: {
            'Nats-Msg-Id': { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16, description: 'The event id: JetStream\'s deduplication key.' },
            'content-type': { type: 'string', const: CLOUDEVENTS_CONTENT_TYPE }
          }
        },
        example: { 'Nats-Msg-Id': String(definition.example.id), 'content-type': CLOUDEVENTS_CONTENT_TYPE }
      })),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveNats: {
      action: 'receive',
      channel: { $ref: '#/channels/nats' },
      title: 'Consume the events from JetStream',
      summary: 'A JetStream consumer on the stream receives every event, in id order, at least once.',
      messages: messageRefs('nats', eventTypes),
      'x-stability': 'beta'
    }
  })
}

/** The events on a RabbitMQ topic exchange, routed by type (`AMQP_URL`). */
export const RABBITMQ_CHANNEL: AsyncApiChannel = {
  id: 'rabbitmq',
  configured: ({ config }) => config.buses.amqp !== undefined,
  servers: ({ config }) => config.buses.amqp === undefined
    ? {}
    : { rabbitmq: { host: brokerHost(config.buses.amqp.url), protocol: 'amqp', protocolVersion: '0.9.1', description: `RabbitMQ (\`AMQP_URL\`): the exchange \`${config.buses.amqp.exchange}\`.` } },
  channel: ({ config, eventTypes }) => {
    const exchange = config.buses.amqp?.exchange ?? 'petstore.events'
    return {
      address: '{eventType}',
      title: 'RabbitMQ: a topic exchange, routed by event type',
      summary: 'Every event, as a persistent CloudEvent message, routed by its type.',
      description: `Every event is published to the durable topic exchange \`${exchange}\` with its type as the routing key, persistent, its publisher ` +
        `confirm awaited before the bus's position moves. ${ORDERING} Bind a queue with \`rabbitmqadmin declare binding\` (\`pet.*\`, \`#\`; docs/buses.md).`,
      parameters: { eventType: { enum: [...eventTypes.types], description: 'The event type: the routing key.' } },
      servers: [{ $ref: '#/servers/rabbitmq' }],
      bindings: { amqp: { is: 'routingKey', exchange: { name: exchange, type: 'topic', durable: true, autoDelete: false, vhost: '/' }, bindingVersion: '0.3.0' } },
      messages: busMessages(config, eventTypes, 'On RabbitMQ it is one persistent message, its routing key and `type` property the event type, its `message_id` the event id.',
        (definition) => ({ amqp: { messageType: definition.type, bindingVersion: '0.3.0' } }),
        (definition) => ({
          schema: {
            type: 'object',
            required: ['message_id', 'content_type'],
            properties: {
              message_id: { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16, description: 'The AMQP `message_id` property: the event id.' },
              content_type: { type: 'string', const: CLOUDEVENTS_CONTENT_TYPE, description: 'The AMQP `content_type` property.' }
            }
          },
          example: { message_id: String(definition.example.id), content_type: CLOUDEVENTS_CONTENT_TYPE }
        })),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveRabbitMq: {
      action: 'receive',
      channel: { $ref: '#/channels/rabbitmq' },
      title: 'Consume the events from a bound queue',
      summary: 'A queue bound to the exchange receives the events of the routing keys it binds, in id order, at least once.',
      bindings: { amqp: { ack: true, bindingVersion: '0.3.0' } },
      messages: messageRefs('rabbitmq', eventTypes),
      'x-stability': 'beta'
    }
  })
}
