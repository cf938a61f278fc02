import { messageKeyOf, receiveOperation, type AsyncApiChannel, type EventTypeCatalogue, type EventTypeDefinition } from '../events/index.js'
import type { AmqpBusSettings, NatsBusSettings } from '../../infra/config/bus-config.js'
import { CLOUDEVENTS_CONTENT_TYPE } from './bus.js'
import { cloudEventExample, cloudEventSchema, exampleMessageId, MESSAGE_ID_SCHEMA } from './cloud-event.js'

// Each configured bus as a channel of the AsyncAPI document (docs/buses.md), registered by the buses capability for the
// buses this deployment publishes to: its server the broker (host only: the URL's credentials never reach a document),
// each event type one CloudEvent message.

/** The broker's host and port, from its URL without the credentials. */
function brokerHost (url: string): string {
  return new URL(url).host
}

/** Each registered type as a CloudEvent message of a bus channel. */
function busMessages (eventTypes: EventTypeCatalogue, travels: string, bindings: (definition: EventTypeDefinition) => Record<string, unknown>,
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
    examples: [{ name: messageKeyOf(definition.type), summary: `A \`${definition.type}\` CloudEvent.`, headers: headers(definition).example, payload: cloudEventExample(definition) }],
    'x-stability': 'beta'
  }]))
}

const ORDERING = 'Published in event-id order, at least once: after a broker outage or a publisher\'s crash an event may come again; deduplicate by its `source` and `id`.'

/** The events in a JetStream stream, one subject per type (`NATS_URL`). */
export const natsChannel = (nats: NatsBusSettings): AsyncApiChannel => ({
  id: 'nats',
  servers: () => ({ nats: { host: brokerHost(nats.url), protocol: 'nats', description: `NATS with JetStream (\`NATS_URL\`): the stream \`${nats.stream}\`.` } }),
  channel: ({ eventTypes }) => {
    return {
      address: `${nats.subjectPrefix}.{eventType}`,
      title: 'NATS JetStream: one subject per event type',
      summary: 'Every event, as a CloudEvent, on the subject of its type.',
      description: `Every event is published to \`${nats.subjectPrefix}.<type>\` in the JetStream stream \`${nats.stream}\` ` +
        `(subjects \`${nats.subjectPrefix}.>\`, file storage), its publish acknowledged before the bus's position moves. ${ORDERING} ` +
        'JetStream also drops a republished event within its duplicate window (`Nats-Msg-Id`, the deployment\'s own). The stream is created with a maximum age (`NATS_STREAM_MAX_AGE_DAYS`). Bind a consumer with `nats consumer add` (docs/buses.md).',
      parameters: { eventType: { enum: [...eventTypes.types], description: 'The event type, as the subject\'s last tokens (`pet.created`).' } },
      servers: [{ $ref: '#/servers/nats' }],
      messages: busMessages(eventTypes, 'On NATS it is one JetStream message on its type\'s subject.', () => ({}), (definition) => ({
        schema: {
          type: 'object',
          required: ['Nats-Msg-Id', 'content-type'],
          properties: {
            'Nats-Msg-Id': { ...MESSAGE_ID_SCHEMA, description: '`<deployment id>:<event id>`: JetStream\'s deduplication key, never another deployment\'s.' },
            'content-type': { type: 'string', const: CLOUDEVENTS_CONTENT_TYPE }
          }
        },
        example: { 'Nats-Msg-Id': exampleMessageId(definition), 'content-type': CLOUDEVENTS_CONTENT_TYPE }
      })),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveNats: receiveOperation('nats', eventTypes, {
      title: 'Consume the events from JetStream',
      summary: 'A JetStream consumer on the stream receives every event, in id order, at least once.'
    })
  })
})

/** The events on a RabbitMQ topic exchange, routed by type (`AMQP_URL`). */
export const rabbitMqChannel = (amqp: AmqpBusSettings): AsyncApiChannel => ({
  id: 'rabbitmq',
  servers: () => ({ rabbitmq: { host: brokerHost(amqp.url), protocol: 'amqp', protocolVersion: '0.9.1', description: `RabbitMQ (\`AMQP_URL\`): the exchange \`${amqp.exchange}\`.` } }),
  channel: ({ eventTypes }) => {
    const { exchange } = amqp
    return {
      address: '{eventType}',
      title: 'RabbitMQ: a topic exchange, routed by event type',
      summary: 'Every event, as a persistent CloudEvent message, routed by its type.',
      description: `Every event is published to the durable topic exchange \`${exchange}\` with its type as the routing key, persistent, its publisher ` +
        `confirm awaited before the bus's position moves. ${ORDERING} Bind a queue with \`rabbitmqadmin declare binding\` (\`pet.*\`, \`#\`; docs/buses.md).`,
      parameters: { eventType: { enum: [...eventTypes.types], description: 'The event type: the routing key.' } },
      servers: [{ $ref: '#/servers/rabbitmq' }],
      bindings: { amqp: { is: 'routingKey', exchange: { name: exchange, type: 'topic', durable: true, autoDelete: false, vhost: '/' }, bindingVersion: '0.3.0' } },
      messages: busMessages(eventTypes, 'On RabbitMQ it is one persistent message, its routing key and `type` property the event type, its `message_id` `<deployment id>:<event id>`.',
        (definition) => ({ amqp: { messageType: definition.type, bindingVersion: '0.3.0' } }),
        (definition) => ({
          schema: {
            type: 'object',
            required: ['message_id', 'content_type'],
            properties: {
              message_id: { ...MESSAGE_ID_SCHEMA, description: 'The AMQP `message_id` property: `<deployment id>:<event id>`.' },
              content_type: { type: 'string', const: CLOUDEVENTS_CONTENT_TYPE, description: 'The AMQP `content_type` property.' }
            }
          },
          example: { message_id: exampleMessageId(definition), content_type: CLOUDEVENTS_CONTENT_TYPE }
        })),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveRabbitMq: receiveOperation('rabbitmq', eventTypes, {
      title: 'Consume the events from a bound queue',
      summary: 'A queue bound to the exchange receives the events of the routing keys it binds, in id order, at least once.',
      bindings: { amqp: { ack: true, bindingVersion: '0.3.0' } }
    })
  })
})
