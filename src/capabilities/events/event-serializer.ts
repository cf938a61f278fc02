import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import type { Event, EventTypeCatalogue } from './event-types.js'

/** Writes one event as JSON, exactly as a feed page holds it (int64 values beyond 2^53 digit for digit). */
export type SerializeEvent = (event: Event) => string

/**
 * The feed's serializer, compiled by the route's own compiler (Fastify keeps each compiled function per route,
 * so every reply of the route gives the same ones): the JSON page and the stream write an event alike. Each
 * type by its own schema, as the Event oneOf's discriminator picks it: the oneOf itself would have the
 * serializer try each option with ajv, whose `integer` refuses an int64 held as a bigint (and which costs a
 * validation per event). The function returned keeps the compiled functions only, not `reply`.
 */
export function compileEventSerializer (reply: FastifyReply, catalogue: EventTypeCatalogue): SerializeEvent {
  const byType = new Map(catalogue.definitions.map(({ type, schema }) =>
    [type, reply.compileSerializationSchema(Type.Ref(schema) as unknown as Record<string, unknown>)]))
  return (event) => {
    const serialize = byType.get(event.type)
    // a type no capability registered cannot be in the feed: the stores write only their own
    if (serialize === undefined) throw new Error(`event ${event.id} has the unregistered type ${event.type}`)
    return serialize(event)
  }
}
