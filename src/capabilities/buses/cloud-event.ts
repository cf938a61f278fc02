import { componentRefOf, subjectIdOf, type Event, type EventSerializer, type EventTypeCatalogue, type EventTypeDefinition } from '../events/index.js'
import type { BusMessage } from './bus.js'

/** The CloudEvents version every message says it follows (`specversion`). */
export const CLOUDEVENTS_SPEC_VERSION = '1.0'

/** The CloudEvents `source` of a deployment's events: one per deployment, whichever instance publishes them. */
export const eventSourceOf = (deploymentId: string): string => `urn:uuid:${deploymentId}`

/** A message's id at the broker: unique across the deployments that share it, the same for every retry of one event. */
export const messageIdOf = (deploymentId: string, eventId: number): string => `${deploymentId}:${eventId}`

/** An example deployment id, for the documents (each deployment has its own: `npx petstore buses` shows it). */
export const EXAMPLE_DEPLOYMENT_ID = '6e8bc430-9c3a-41d9-9669-0800200c9a66'

/** A message id's schema: {@link messageIdOf}'s form. */
export const MESSAGE_ID_SCHEMA = { type: 'string', pattern: '^[0-9a-f-]{36}:[1-9][0-9]{0,15}$', maxLength: 53 } as const

/** `definition`'s example's message id. */
export const exampleMessageId = (definition: EventTypeDefinition): string => messageIdOf(EXAMPLE_DEPLOYMENT_ID, definition.example.id)

/**
 * Writes each event as a CloudEvent 1.0 in structured JSON mode: `specversion`, `id` (the event id as a string),
 * `source` (the deployment's, {@link eventSourceOf}: the same from every instance, never another deployment's), `type`, `time` (its `occurredAt`), `subject`, `datacontenttype` and
 * `data`, written by the feed's own serializer (`app.eventSerializer`, fast-json-stringify, as `listEvents` writes
 * it), so int64 values stay digit for digit. The `cloudevents` SDK is not used: its JSON goes through
 * `JSON.stringify`, which throws on a bigint and rounds what arrived as a number beyond 2^53.
 */
export function cloudEventWriter (serializer: EventSerializer, deploymentId: string, eventTypes: EventTypeCatalogue): (event: Event) => BusMessage {
  // the attributes every message shares, written once
  const head = `{"specversion":"${CLOUDEVENTS_SPEC_VERSION}","source":${JSON.stringify(eventSourceOf(deploymentId))}`
  return (event) => {
    const definition = eventTypes.definitionOf(event.type)
    // the outbox holds only registered types: one it does not know is a release mismatch, not a message to guess at
    if (definition === undefined) throw new Error(`event ${event.id} has type ${event.type}, which no capability registered`)
    const id = String(event.id)
    // the pet's, the order's or the category's id: the CloudEvents `subject`, what a consumer keys its copy by
    const subject = String(subjectIdOf(definition, event))
    const text = `${head},"id":"${id}","type":${JSON.stringify(event.type)},"time":${JSON.stringify(event.occurredAt)},` +
      `"subject":${JSON.stringify(subject)},"datacontenttype":"application/json","data":${serializer.data(event)}}`
    return { id: messageIdOf(deploymentId, event.id), eventId: event.id, type: event.type, body: Buffer.from(text) }
  }
}

// What a consumer reads, as the AsyncAPI document describes it: the attributes the writer above writes, in one place.

/** A CloudEvent 1.0 (structured JSON mode) carrying an event of `definition`'s type: its `data` is the event's `data`. */
export function cloudEventSchema (definition: EventTypeDefinition): Record<string, unknown> {
  return {
    type: 'object',
    description: 'A CloudEvent 1.0 in structured JSON mode (cloudevents.io): the event\'s attributes, and its `data` exactly as the feed holds it.',
    required: ['specversion', 'id', 'source', 'type', 'time', 'subject', 'datacontenttype', 'data'],
    properties: {
      specversion: { type: 'string', const: CLOUDEVENTS_SPEC_VERSION },
      id: { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16, description: 'The event id, as a string, unique within its `source`: deduplicate by `source` and `id`, order by it as a number.' },
      source: {
        type: 'string',
        format: 'uri',
        pattern: '^urn:uuid:[0-9a-f-]{36}$',
        maxLength: 45,
        description: 'The deployment that recorded the event (`urn:uuid:<deployment id>`): the same from every instance of it, another for any other deployment (staging, a restored copy). `source` and `id` identify an event.'
      },
      type: { type: 'string', const: definition.type },
      time: { type: 'string', format: 'date-time', maxLength: 40, description: 'When the change was committed (the event\'s `occurredAt`).' },
      subject: { type: 'string', pattern: definition.subject.idPattern ?? '^[1-9][0-9]{0,18}$', maxLength: definition.subject.idPattern === undefined ? 19 : 20, description: `The ${definition.subject.name}'s id (\`${definition.subject.idPointer}\` in the event).` },
      datacontenttype: { type: 'string', const: 'application/json' },
      data: { $ref: `${componentRefOf(definition.schema)}/properties/data` }
    }
  }
}

/** `definition`'s example, as the bus carries it. */
export function cloudEventExample (definition: EventTypeDefinition): Record<string, unknown> {
  const { example } = definition
  return {
    specversion: CLOUDEVENTS_SPEC_VERSION,
    id: String(example.id),
    source: eventSourceOf(EXAMPLE_DEPLOYMENT_ID),
    type: definition.type,
    time: example.occurredAt,
    subject: String(subjectIdOf(definition, example)),
    datacontenttype: 'application/json',
    data: example.data
  }
}
