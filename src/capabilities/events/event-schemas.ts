import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ORDER_EVENT_SCHEMAS, ORDER_EVENT_TYPES, OrderCreatedEventSchema, OrderUpdatedEventSchema, type OrderCreatedEvent, type OrderUpdatedEvent } from '../orders/index.js'
import { MAX_EXACT_INTEGER, PET_CREATED_EXAMPLE, PET_EVENT_SCHEMAS, PET_EVENT_TYPES, PET_UPDATED_EXAMPLE, PetCreatedEventSchema, PetUpdatedEventSchema, type PetCreatedEvent, type PetUpdatedEvent } from '../pets/index.js'

/** Every type of event the feed carries, in the order the document lists them. */
export const EVENT_TYPES = [...PET_EVENT_TYPES, ...ORDER_EVENT_TYPES] as const
export type EventType = typeof EVENT_TYPES[number]

/** Each type's own schema: what the feed serializes an event of that type with, and what webhooks document. */
export const EVENT_SCHEMA_OF_TYPE: Readonly<Record<EventType, TSchema>> = {
  'pet.created': PetCreatedEventSchema,
  'pet.updated': PetUpdatedEventSchema,
  'order.created': OrderCreatedEventSchema,
  'order.updated': OrderUpdatedEventSchema
}

/** Default number of events on a feed page. */
export const EVENT_PAGE_LIMIT_DEFAULT = 20
/** Most events on a feed page. */
export const EVENT_PAGE_LIMIT_MAX = 100

/** Any event of the feed, as a value. */
export type Event = PetCreatedEvent | PetUpdatedEvent | OrderCreatedEvent | OrderUpdatedEvent

/** One event of the feed: one schema per type, told apart by `type` (OpenAPI's discriminator). */
export const EventSchema = Type.Unsafe<Event>({
  $id: 'Event',
  oneOf: EVENT_TYPES.map((type) => Type.Ref(EVENT_SCHEMA_OF_TYPE[type])),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(EVENT_TYPES.map((type) => [type, `#/components/schemas/${String(EVENT_SCHEMA_OF_TYPE[type].$id)}`]))
  },
  description: 'A change of the catalogue or of an order, as the feed (`listEvents`) and webhooks carry it. New types may be added: skip a `type` you do not know.',
  examples: [PET_CREATED_EXAMPLE]
})

export const EventsSchema = Type.Array(Type.Ref(EventSchema), {
  $id: 'Events',
  maxItems: EVENT_PAGE_LIMIT_MAX,
  examples: [[PET_CREATED_EXAMPLE, PET_UPDATED_EXAMPLE]],
  description: `Events in \`id\` order, at most ${EVENT_PAGE_LIMIT_MAX} (one page).`
})

export const ListEventsQuerySchema = Type.Object({
  after: Type.Optional(Type.Integer({
    format: 'int64',
    minimum: 0,
    maximum: MAX_EXACT_INTEGER,
    description: 'Return only events with an id above this one (the last id you processed). Left out: from the oldest event still retained. ' +
      'Plain decimal digits. When events after it were already deleted by retention, the answer is 410 `events_expired`.',
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
    items: { type: 'string', enum: [...EVENT_TYPES] },
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    style: 'form',
    explode: true,
    description: 'Return only events of these types: repeat the parameter for each (`type=pet.created&type=order.updated`); one `type` is a list of one. ' +
      `Left out: events of every type. The types are ${EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}; an unknown one is 400 \`invalid_request\`.`,
    examples: [['pet.created', 'order.updated']]
  }))
}, { additionalProperties: false })
export type ListEventsQuery = Static<typeof ListEventsQuerySchema>

/** The feed's schemas, in the order they become the document's components: each type's, then the union and the page. */
export const EVENT_SCHEMAS = [...PET_EVENT_SCHEMAS, ...ORDER_EVENT_SCHEMAS, EventSchema, EventsSchema] as const
