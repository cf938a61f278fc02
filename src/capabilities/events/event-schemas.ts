import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { MAX_EVENT_ID } from '../../infra/schemas/event-envelope.js'
import type { Event, EventType, EventTypeCatalogue } from './event-types.js'

/** Default number of events on a feed page. */
export const EVENT_PAGE_LIMIT_DEFAULT = 20
/** Most events on a feed page. */
export const EVENT_PAGE_LIMIT_MAX = 100

/** The `$ref` of an event type's own schema in the OpenAPI document. */
export function componentRefOf (schema: TSchema): string {
  return `#/components/schemas/${String(schema.$id)}`
}

/** One event of the feed: one schema per registered type, told apart by `type` (OpenAPI's discriminator). */
export function eventSchema (catalogue: EventTypeCatalogue): TSchema {
  return Type.Unsafe<Event>({
    $id: 'Event',
    oneOf: catalogue.definitions.map(({ schema }) => Type.Ref(schema)),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(catalogue.definitions.map(({ type, schema }) => [type, componentRefOf(schema)]))
    },
    description: `A change of ${catalogue.subjectsProse()}, as the feed (\`listEvents\`) and webhooks carry it. New types may be added: skip a \`type\` you do not know.`,
    examples: catalogue.definitions.slice(0, 1).map(({ example }) => example)
  })
}

/** A page of the feed. */
export function eventsSchema (catalogue: EventTypeCatalogue): TSchema {
  return Type.Array(Type.Ref('Event'), {
    $id: 'Events',
    maxItems: EVENT_PAGE_LIMIT_MAX,
    examples: [catalogue.definitions.slice(0, 2).map(({ example }) => example)],
    description: `Events in \`id\` order, at most ${EVENT_PAGE_LIMIT_MAX} (one page).`
  })
}

/** The feed's query: `type` takes the registered types. */
export function listEventsQuerySchema (catalogue: EventTypeCatalogue) {
  const types = catalogue.types
  return Type.Object({
    after: Type.Optional(Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: MAX_EVENT_ID,
      description: 'Return only events with an id above this one (the last id you processed). Left out: from the oldest event still retained. ' +
        `Plain decimal digits, at most ${MAX_EVENT_ID} (2^53−1, the largest id an event can have); beyond it is 400 \`invalid_request\`. ` +
        'When events after it were already deleted by retention, the answer is 410 `events_expired`.',
      examples: [41]
    })),
    limit: Type.Optional(Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: EVENT_PAGE_LIMIT_MAX,
      default: EVENT_PAGE_LIMIT_DEFAULT,
      description: `Maximum number of events returned: an integer from 1 to ${EVENT_PAGE_LIMIT_MAX}, default ${EVENT_PAGE_LIMIT_DEFAULT}, in plain decimal digits.`,
      examples: [EVENT_PAGE_LIMIT_DEFAULT]
    })),
    type: Type.Optional(Type.Unsafe<EventType[]>({
      type: 'array',
      items: { type: 'string', enum: [...types] },
      minItems: 1,
      maxItems: types.length,
      style: 'form',
      explode: true,
      description: 'Return only events of these types: repeat the parameter for each (`type=pet.created&type=order.updated`); one `type` is a list of one. ' +
        `Left out: events of every type. The types are ${catalogue.prose()}; an unknown one is 400 \`invalid_request\`.`,
      examples: [['pet.created', 'order.updated']]
    }))
  }, { additionalProperties: false })
}
export type ListEventsQuery = Static<ReturnType<typeof listEventsQuerySchema>>

/** The feed's schemas, in the order they become the document's components: each producer's, then the union and the page. */
export function feedSchemas (catalogue: EventTypeCatalogue): TSchema[] {
  return [...catalogue.schemas, eventSchema(catalogue), eventsSchema(catalogue)]
}
