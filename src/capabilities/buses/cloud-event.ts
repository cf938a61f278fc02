import type { TSchema } from '@sinclair/typebox'
import { serializerCompiler } from '../../infra/http/serialization.js'
import { subjectIdOf, type Event, type EventTypeCatalogue, type EventTypeDefinition } from '../events/index.js'
import type { BusMessage } from './bus.js'

/** The CloudEvents version every message says it follows (`specversion`). */
export const CLOUDEVENTS_SPEC_VERSION = '1.0'

/** The shared schemas the feed's serializers resolve `$ref`s against (the app's `getSchemas()`). */
type SharedSchemas = Parameters<typeof serializerCompiler>[0]

/**
 * Writes each event as a CloudEvent 1.0 in structured JSON mode: `specversion`, `id` (the event id as a string),
 * `source` (the service's public base URL), `type`, `time` (its `occurredAt`), `subject`, `datacontenttype` and
 * `data`, written by the feed's own serializer of that type's `data` (fast-json-stringify, as `listEvents` writes
 * it), so int64 values stay digit for digit. The `cloudevents` SDK is not used: its JSON goes through
 * `JSON.stringify`, which throws on a bigint and rounds what arrived as a number beyond 2^53.
 */
export function cloudEventWriter (schemas: SharedSchemas, source: string, eventTypes: EventTypeCatalogue): (event: Event) => BusMessage {
  const compile = serializerCompiler(schemas, undefined)
  // per type: its definition (the subject's pointer) and its `data`'s serializer
  const writers = new Map(eventTypes.definitions.map((definition: EventTypeDefinition) => {
    const data = (definition.schema as TSchema & { properties: { data: TSchema } }).properties.data
    return [definition.type, { definition, data: compile({ schema: data, method: 'GET', url: '/events', httpStatus: '200' }) }]
  }))
  // the attributes every message shares, written once
  const head = `{"specversion":"${CLOUDEVENTS_SPEC_VERSION}","source":${JSON.stringify(source)}`
  return (event) => {
    const writer = writers.get(event.type)
    // the outbox holds only registered types: one it does not know is a release mismatch, not a message to guess at
    if (writer === undefined) throw new Error(`event ${event.id} has type ${event.type}, which no capability registered`)
    const id = String(event.id)
    // the pet's or the order's id: the CloudEvents `subject`, what a consumer keys its copy by
    const subject = String(subjectIdOf(writer.definition, event))
    const text = `${head},"id":"${id}","type":${JSON.stringify(event.type)},"time":${JSON.stringify(event.occurredAt)},` +
      `"subject":${JSON.stringify(subject)},"datacontenttype":"application/json","data":${writer.data(event.data)}}`
    return { id, type: event.type, body: Buffer.from(text) }
  }
}
