import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { EVENT_PAGE_LIMIT_DEFAULT, listEventsQuerySchema } from './event-schemas.js'
import type { Event, EventType, EventTypeCatalogue } from './event-types.js'
import { commonErrorResponses, errorResponse } from '../../infra/schemas/responses.js'

/** The 410 of a consumer whose position retention has deleted events after. */
export function eventsExpiredMessage (afterId: number, purgedThrough: number, oldestId: number | undefined): string {
  const oldest = oldestId === undefined ? 'no event is retained now' : `the oldest retained event is ${oldestId}`
  return `Events after ${afterId} up to ${purgedThrough} are no longer retained (${oldest}): resynchronize from the catalogue (listPets), ` +
    `then follow the feed from after=${purgedThrough}.`
}

// each type's own schema, as the Event oneOf's discriminator picks it: the oneOf itself would have the
// serializer try each option with ajv, whose `integer` refuses an int64 held as a bigint (and which costs a
// validation per event)
function schemaOfType (catalogue: EventTypeCatalogue): ReadonlyMap<EventType, Record<string, unknown>> {
  return new Map(catalogue.definitions.map(({ type, schema }) => [type, Type.Ref(schema) as unknown as Record<string, unknown>]))
}

/** Sends a page of events as the Events schema describes it, each serialized by its type's schema. */
function sendEvents (reply: FastifyReply, schemaOf: ReadonlyMap<EventType, Record<string, unknown>>, events: readonly Event[]): FastifyReply {
  const serialize = (event: Event): string => {
    const schema = schemaOf.get(event.type)
    // a type no capability registered cannot be in the table: the stores write only their own
    if (schema === undefined) throw new Error(`event ${event.id} has the unregistered type ${event.type}`)
    return reply.compileSerializationSchema(schema)(event)
  }
  return reply.type('application/json; charset=utf-8').send(`[${events.map(serialize).join(',')}]`)
}

/**
 * `GET /events` (listEvents, beta): the change feed. Every page links to the next, also an empty one,
 * so a consumer polls by following `next` forever and sees every event once, in id order.
 */
const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const types = app.eventTypes
  const schemaOf = schemaOfType(types)
  app.get('/events', {
    schema: {
      operationId: 'listEvents',
      tags: ['events'],
      summary: 'Follow the changes of the catalogue (beta)',
      description: `Returns at most \`limit\` events with an id above \`after\`, in id order (${types.prose()}): ` +
        'every change of a pet or an order records exactly one event, in the same transaction as the change; a request that changes nothing records none. ' +
        'Event ids increase in commit order, so once you have seen an event no event with a smaller id can appear later. ' +
        'Every answer carries `Link: <…/v1/events?after=…>; rel="next"`, after the last event returned (or with the same `after` when ' +
        'there is none yet): follow it, now or after a pause when the page was empty, and you see every event exactly once. ' +
        'Events are kept for a retention period (`EVENT_RETENTION_DAYS`, 30 days by default); asking for events after an id whose successors ' +
        'were deleted is 410 `events_expired`, and the consumer must resynchronize.',
      'x-stability': 'beta',
      querystring: listEventsQuerySchema(types),
      response: {
        200: {
          ...Type.Ref('Events'),
          description: 'A page of events (a bare array, possibly empty).',
          headers: {
            Link: {
              type: 'string',
              description: 'RFC 8288 link to the next page, always present: `<…/v1/events?after=…&limit=…>; rel="next"` (with every `type` asked for, repeated, when filtered).',
              pattern: '^<[^>]+/events\\?[^>]+>; rel="next"$',
              maxLength: 2000,
              example: '<https://api.petstore.test/v1/events?after=42&limit=20>; rel="next"'
            }
          }
        },
        400: errorResponse('`after`, `limit` or `type` is invalid, or a query parameter is unknown (`invalid_request`).', undefined, {
          invalid_request: `query parameter "type": "pet.deleted" must be one of ${types.types.map((type) => `"${type}"`).join(', ')}`
        }),
        410: errorResponse('Events after `after` (of the `type`s asked for) were deleted by retention (`events_expired`): resynchronize, then follow `Link`.', {
          Link: {
            type: 'string',
            description: 'RFC 8288 link to where the feed resumes after the deleted events: `<…/v1/events?after=…&limit=…>; rel="next"`. Follow it once resynchronized.',
            pattern: '^<[^>]+/events\\?[^>]+>; rel="next"$',
            maxLength: 2000,
            example: '<https://api.petstore.test/v1/events?after=1200&limit=20>; rel="next"'
          }
        }, { events_expired: eventsExpiredMessage(7, 1200, 1201) }),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { after, limit = EVENT_PAGE_LIMIT_DEFAULT, type } = request.query
    const page = await app.eventStore.listEvents({ afterId: after ?? 0, limit, types: type })
    const nextLink = (position: number): string => {
      const next = new URLSearchParams({ after: String(position), limit: String(limit) })
      for (const each of type ?? []) next.append('type', each)
      return `<${baseUrlFor(app.config, request.host)}/events?${next.toString()}>; rel="next"`
    }
    if (after !== undefined && after < page.purgedThrough) {
      // the link is where to follow from once resynchronized, for clients that read it rather than the message
      throw new ApiError('events_expired', eventsExpiredMessage(after, page.purgedThrough, await app.eventStore.oldestEventId()), { link: nextLink(page.purgedThrough) })
    }
    // the next page starts after the last event returned; with none, where this one started (or, from the start,
    // after what retention deleted: the same events, and no 410 if more are deleted meanwhile)
    return sendEvents(reply.header('link', nextLink(page.events.at(-1)?.id ?? after ?? page.purgedThrough)), schemaOf, page.events)
  })

  allowOnly(app, '/events', ['GET'])
}

export default eventsRoutes
