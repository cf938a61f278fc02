import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { eventExpiredMessage, eventsExpiredMessage, retentionPassed } from './event-expiry.js'
import { EVENT_PAGE_LIMIT_DEFAULT, listEventsQuerySchema } from './event-schemas.js'
import type { Event } from './event-types.js'
import type { SerializeEvent } from './event-serializer.js'
import { eventStreamContent, ListEventsHeadersSchema, LIST_EVENTS_STREAM_DESCRIPTION, STREAM_CAP_429, STREAM_CAP_503 } from './stream/event-stream-document.js'
import { prefersEventStream } from './stream/sse-format.js'
import { commonErrorResponses, errorResponse } from '../../infra/schemas/responses.js'

/** Sends a page of events as the Events schema describes it, each serialized by its type's schema. */
function sendEvents (reply: FastifyReply, serialize: SerializeEvent, events: readonly Event[]): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(`[${events.map(serialize).join(',')}]`)
}

/** getEvent's path parameter: the ids of the feed (positive, within 2^53 − 1 like `after`). */
const EventIdParamsSchema = Type.Object({
  eventId: Type.Integer({
    format: 'int64',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The id of an event, as the feed, the stream and webhook deliveries (`webhook-id`) carry it: a positive integer in plain decimal digits. ' +
      'An id no event was recorded with is 404; one retention deleted is 410.',
    examples: [42]
  })
})

/** The message of getEvent's 404: no event was ever recorded with `id`. */
export function eventNotFoundMessage (id: number): string {
  return `No event has id ${id}: none was recorded with it.`
}

/**
 * `GET /events` (listEvents, beta): the change feed. Every page links to the next, also an empty one,
 * so a consumer polls by following `next` forever and sees every event once, in id order.
 */
const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const types = app.eventTypes
  // the stream's example in the document: the first registered type's
  const firstExample = types.definitions[0]?.example
  if (firstExample === undefined) throw new Error('the feed has no event type: the capabilities that record events register their types before events')
  app.get('/events', {
    schema: {
      operationId: 'listEvents',
      tags: ['events'],
      summary: 'Follow the changes of the catalogue (beta)',
      description: `Returns at most \`limit\` events with an id above \`after\`, in id order (${types.prose()}): ` +
        `every change of ${types.subjectsProse()} records exactly one event, in the same transaction as the change; a request that changes nothing records none. ` +
        'Event ids increase in commit order, so once you have seen an event no event with a smaller id can appear later. ' +
        'Every answer carries `Link: <…/v1/events?after=…>; rel="next"`, after the last event returned (or with the same `after` when ' +
        'there is none yet): follow it, now or after a pause when the page was empty, and you see every event exactly once. ' +
        'Events are kept for a retention period (`EVENT_RETENTION_DAYS`, 30 days by default); asking for events after an id whose successors ' +
        'were deleted is 410 `events_expired`, and the consumer must resynchronize. ' + LIST_EVENTS_STREAM_DESCRIPTION,
      'x-stability': 'beta',
      querystring: listEventsQuerySchema(types),
      headers: ListEventsHeadersSchema,
      response: {
        200: {
          description: 'A page of events (a bare array, possibly empty), as `application/json`; or, when `Accept` asks for `text/event-stream`, the stream of events.',
          content: {
            'application/json': { schema: Type.Ref('Events') },
            ...eventStreamContent(firstExample)
          },
          headers: {
            Link: {
              type: 'string',
              description: 'RFC 8288 link to the next page, on every page (not on a stream): `<…/v1/events?after=…&limit=…>; rel="next"` (with every `type` asked for, repeated, when filtered).',
              pattern: '^<[^>]+/events\\?[^>]+>; rel="next"$',
              maxLength: 2000,
              example: '<https://api.petstore.test/v1/events?after=42&limit=20>; rel="next"'
            }
          }
        },
        400: errorResponse('`after`, `limit` or `type` is invalid, a query parameter is unknown, or `Last-Event-ID` is not an event id (`invalid_request`).', undefined, {
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
        ...commonErrorResponses(),
        429: STREAM_CAP_429,
        503: STREAM_CAP_503
      }
    }
  }, async (request, reply) => {
    const { after, limit = EVENT_PAGE_LIMIT_DEFAULT, type } = request.query
    const nextLink = (position: number): string => {
      const next = new URLSearchParams({ after: String(position), limit: String(limit) })
      for (const each of type ?? []) next.append('type', each)
      return `<${baseUrlFor(app.config, request.host)}/events?${next.toString()}>; rel="next"`
    }
    // the link is where to follow from once resynchronized, for clients that read it rather than the message
    const expired = async (position: number, purgedThrough: number): Promise<ApiError> =>
      new ApiError('events_expired', eventsExpiredMessage(position, purgedThrough, await app.eventStore.oldestEventId()), { link: nextLink(purgedThrough) })
    // a HEAD is answered as the page would be: a stream has no end to answer it with
    if (request.method === 'GET' && prefersEventStream(request.headers.accept)) {
      // Last-Event-ID (what an EventSource sends when it reconnects) wins over after
      const lastEventId = request.headers['last-event-id']
      return await app.eventStreams.answer(request, reply, { after: lastEventId ?? after, types: type, expired })
    }
    const page = await app.eventStore.listEvents({ afterId: after ?? 0, limit, types: type })
    if (after !== undefined && retentionPassed(after, page.purgedThrough)) throw await expired(after, page.purgedThrough)
    // the next page starts after the last event returned; with none, where this one started (or, from the start,
    // after what retention deleted: the same events, and no 410 if more are deleted meanwhile)
    return sendEvents(reply.header('link', nextLink(page.events.at(-1)?.id ?? after ?? page.purgedThrough)), app.eventSerializer.event, page.events)
  })

  app.get('/events/:eventId', {
    schema: {
      operationId: 'getEvent',
      tags: ['events'],
      summary: 'Get one event (beta)',
      description: 'Returns the event with this id exactly as a page of `listEvents` holds it, byte for byte: to look up the event a webhook ' +
        'delivery or a stream message named, or to check one. An id no event was recorded with is 404 `event_not_found`; an event retention ' +
        'deleted (`EVENT_RETENTION_DAYS`, 30 days by default) is 410 `events_expired`. An event never changes once recorded.',
      'x-stability': 'beta',
      params: EventIdParamsSchema,
      response: {
        200: { ...Type.Ref('Event'), description: 'The event, as the feed holds it.' },
        400: errorResponse('`eventId` is not a positive integer up to 2^53−1, or a query parameter was sent (`invalid_request`).', undefined,
          { invalid_request: 'path parameter "eventId" must be >= 1' }),
        404: errorResponse('No event was recorded with this id (`event_not_found`).', undefined, { event_not_found: eventNotFoundMessage(4242) }),
        410: errorResponse('Retention deleted this event (`events_expired`).', undefined, { events_expired: eventExpiredMessage(7, 1200, 1201) }),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const id = request.params.eventId
    const lookup = await app.eventStore.findEvent(id)
    if (lookup.found) return reply.type('application/json; charset=utf-8').send(app.eventSerializer.event(lookup.event))
    // retention deletes a prefix of the ids: an id at or below the highest it deleted is gone, whatever its type
    if (id <= lookup.purgedThrough) throw new ApiError('events_expired', eventExpiredMessage(id, lookup.purgedThrough, await app.eventStore.oldestEventId()))
    throw new ApiError('event_not_found', eventNotFoundMessage(id))
  })

  allowOnly(app, '/events', ['GET'])
  allowOnly(app, '/events/:eventId', ['GET'])
}

export default eventsRoutes
