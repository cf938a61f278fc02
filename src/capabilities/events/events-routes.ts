import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { EVENT_PAGE_LIMIT_DEFAULT, EVENT_SCHEMA_OF_TYPE, EVENT_TYPES, EventsSchema, ListEventsQuerySchema, type Event, type EventType } from './event-schemas.js'
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
const SCHEMA_OF_TYPE = Object.fromEntries(EVENT_TYPES.map((type) => [type, Type.Ref(EVENT_SCHEMA_OF_TYPE[type])])) as unknown as Record<EventType, Record<string, unknown>>

/** Sends a page of events as the Events schema describes it, each serialized by its type's schema. */
function sendEvents (reply: FastifyReply, events: readonly Event[]): FastifyReply {
  const body = `[${events.map((event) => reply.compileSerializationSchema(SCHEMA_OF_TYPE[event.type])(event)).join(',')}]`
  return reply.type('application/json; charset=utf-8').send(body)
}

/**
 * `GET /events` (listEvents, beta): the change feed. Every page links to the next, also an empty one,
 * so a consumer polls by following `next` forever and sees every event once, in id order.
 */
const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/events', {
    schema: {
      operationId: 'listEvents',
      tags: ['events'],
      summary: 'Follow the changes of the catalogue (beta)',
      description: `Returns at most \`limit\` events with an id above \`after\`, in id order (${EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}): ` +
        'every change of a pet or an order records exactly one event, in the same transaction as the change; a request that changes nothing records none. ' +
        'Event ids increase in commit order, so once you have seen an event no event with a smaller id can appear later. ' +
        'Every answer carries `Link: <…/v1/events?after=…>; rel="next"`, after the last event returned (or with the same `after` when ' +
        'there is none yet): follow it, now or after a pause when the page was empty, and you see every event exactly once. ' +
        'Events are kept for a retention period (`EVENT_RETENTION_DAYS`, 30 days by default); asking for events after an id whose successors ' +
        'were deleted is 410 `events_expired`, and the consumer must resynchronize.',
      'x-stability': 'beta',
      querystring: ListEventsQuerySchema,
      response: {
        200: {
          ...Type.Ref(EventsSchema),
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
          invalid_request: `query parameter "type": "pet.deleted" must be one of ${EVENT_TYPES.map((type) => `"${type}"`).join(', ')}`
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
    return sendEvents(reply.header('link', nextLink(page.events.at(-1)?.id ?? after ?? page.purgedThrough)), page.events)
  })

  allowOnly(app, '/events', ['GET'])
}

export default eventsRoutes
