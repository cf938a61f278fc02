import { Type, type TSchema } from '@sinclair/typebox'
import { serializerCompiler } from '../../infra/http/serialization.js'
import type { Event, EventTypeCatalogue } from './event-types.js'

/** Writes one event as JSON, exactly as a feed page holds it (int64 values beyond 2^53 digit for digit). */
export type SerializeEvent = (event: Event) => string

/** The shared schemas the types' schemas refer to (the app's `getSchemas()`). */
type SharedSchemas = Parameters<typeof serializerCompiler>[0]

/**
 * The feed's serializer, one per app (`app.eventSerializer`): pages, the stream and the buses write an event (or
 * its `data`) with the same compiled functions. Each type by its own schema, as the Event oneOf's discriminator
 * picks it: the oneOf itself would have the serializer try each option with ajv, whose `integer` refuses an int64
 * held as a bigint (and which costs a validation per event).
 */
export interface EventSerializer {
  /** The event, as a feed page holds it. */
  readonly event: SerializeEvent
  /** The event's `data` alone, written as within {@link event} (a CloudEvent's `data`). */
  readonly data: SerializeEvent
}

type Serialize = (value: unknown) => string

/**
 * The serializer of the registered types, compiled by the service's own compiler (fast-json-stringify), each function
 * on its first use and only once: most instances write some types never, and the buses only `data`.
 */
export function createEventSerializer (schemas: () => SharedSchemas, catalogue: EventTypeCatalogue): EventSerializer {
  let compile: ReturnType<typeof serializerCompiler> | undefined
  const compiled = (schema: TSchema): Serialize => {
    compile ??= serializerCompiler(schemas(), undefined)
    return compile({ schema, method: 'GET', url: '/events', httpStatus: '200' })
  }
  const byType = new Map(catalogue.definitions.map(({ type, schema }) => {
    let event: Serialize | undefined
    let data: Serialize | undefined
    return [type, {
      event: (value: Event) => (event ??= compiled(Type.Ref(schema)))(value),
      data: (value: Event) => (data ??= compiled((schema as TSchema & { properties: { data: TSchema } }).properties.data))(value.data)
    }]
  }))
  const serializerOf = (event: Event): { event: SerializeEvent, data: SerializeEvent } => {
    const serializer = byType.get(event.type)
    // a type no capability registered cannot be in the feed: the stores write only their own
    if (serializer === undefined) throw new Error(`event ${event.id} has type ${event.type}, which no capability registered`)
    return serializer
  }
  return {
    event: (event) => serializerOf(event).event(event),
    data: (event) => serializerOf(event).data(event)
  }
}
