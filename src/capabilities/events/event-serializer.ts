import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { EVENT_SCHEMA_OF_TYPE, EVENT_TYPES, type Event, type EventType } from './event-schemas.js'

/** Writes one event as JSON, exactly as a feed page holds it (int64 values beyond 2^53 digit for digit). */
export type SerializeEvent = (event: Event) => string

// each type's own schema, as the Event oneOf's discriminator picks it: the oneOf itself would have the
// serializer try each option with ajv, whose `integer` refuses an int64 held as a bigint (and which costs a
// validation per event)
const SCHEMA_OF_TYPE = Object.fromEntries(EVENT_TYPES.map((type) => [type, Type.Ref(EVENT_SCHEMA_OF_TYPE[type])])) as unknown as Record<EventType, Record<string, unknown>>

/**
 * The feed's serializer, compiled by the route's own compiler (Fastify keeps each compiled function per route,
 * so every reply of the route gives the same ones): the JSON page and the stream write an event alike. The
 * function returned keeps the compiled functions only, not `reply`.
 */
export function compileEventSerializer (reply: FastifyReply): SerializeEvent {
  const byType = new Map(EVENT_TYPES.map((type) => [type, reply.compileSerializationSchema(SCHEMA_OF_TYPE[type])]))
  return (event) => (byType.get(event.type) as (event: Event) => string)(event)
}
