import type { TSchema } from '@sinclair/typebox'
import { serializerCompiler } from '../../infra/http/serialization.js'
import { EVENT_SCHEMA_OF_TYPE, EVENT_TYPES, type Event, type EventType } from '../events/index.js'
import type { BusMessage } from './bus.js'

/** The CloudEvents version every message says it follows (`specversion`). */
export const CLOUDEVENTS_SPEC_VERSION = '1.0'

/** The shared schemas the feed's serializers resolve `$ref`s against (the app's `getSchemas()`). */
type SharedSchemas = Parameters<typeof serializerCompiler>[0]

/** The pet's or the order's id: the CloudEvents `subject`, what a consumer keys its copy by. */
function subjectOf (event: Event): string {
  switch (event.type) {
    case 'pet.created':
    case 'pet.updated': return String(event.data.pet.id)
    case 'order.created':
    case 'order.updated': return String(event.data.order.id)
  }
}

/**
 * Writes each event as a CloudEvent 1.0 in structured JSON mode: `specversion`, `id` (the event id as a string),
 * `source` (the service's public base URL), `type`, `time` (its `occurredAt`), `subject`, `datacontenttype` and
 * `data`, written by the feed's own serializer of that type's `data` (fast-json-stringify, as `listEvents` writes
 * it), so int64 values stay digit for digit. The `cloudevents` SDK is not used: its JSON goes through
 * `JSON.stringify`, which throws on a bigint and rounds what arrived as a number beyond 2^53.
 */
export function cloudEventWriter (schemas: SharedSchemas, source: string): (event: Event) => BusMessage {
  const compile = serializerCompiler(schemas, undefined)
  const dataOf = Object.fromEntries(EVENT_TYPES.map((type) => {
    const data = (EVENT_SCHEMA_OF_TYPE[type] as TSchema & { properties: { data: TSchema } }).properties.data
    return [type, compile({ schema: data, method: 'GET', url: '/events', httpStatus: '200' })]
  })) as Record<EventType, (data: unknown) => string>
  // the attributes every message shares, written once
  const head = `{"specversion":"${CLOUDEVENTS_SPEC_VERSION}","source":${JSON.stringify(source)}`
  return (event) => {
    const id = String(event.id)
    const text = `${head},"id":"${id}","type":${JSON.stringify(event.type)},"time":${JSON.stringify(event.occurredAt)},` +
      `"subject":${JSON.stringify(subjectOf(event))},"datacontenttype":"application/json","data":${dataOf[event.type](event.data)}}`
    return { id, type: event.type, body: Buffer.from(text) }
  }
}
