import { Type, type Static, type TInteger } from '@sinclair/typebox'
import { categoryIdSchema, MAX_EXACT_INTEGER, nameSchema, PET_EXAMPLE, petStatusSchema, PetSchema } from '../pets/pet-schemas.js'

/** Every type of event the feed carries, in the order the document lists them. */
export const EVENT_TYPES = ['pet.created', 'pet.updated'] as const
export type EventType = typeof EVENT_TYPES[number]

/** Default number of events on a feed page. */
export const EVENT_PAGE_LIMIT_DEFAULT = 20
/** Most events on a feed page. */
export const EVENT_PAGE_LIMIT_MAX = 100

/** An event's id: a positive integer, increasing in the order the changes were committed. */
export function eventIdSchema (options: { description: string, examples?: number[] }): TInteger {
  return Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER, ...options })
}

const EVENT_ID_DESCRIPTION = 'The event\'s id: a positive integer. Ids increase in the order the changes were committed: ' +
  'once a reader has seen an event, no event with a smaller id appears later. Ids may skip numbers.'
const OCCURRED_AT_EXAMPLE = '2026-11-25T09:30:00.000Z'
const occurredAtSchema = Type.String({
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  maxLength: 24,
  description: 'When the change was committed, as RFC 3339 in UTC with milliseconds. Instances\' clocks may differ slightly: order events by `id`, not by this time.',
  examples: [OCCURRED_AT_EXAMPLE]
})

/** The example events of the document: a pet created, then reserved. */
const CREATED_EXAMPLE = { id: 41, type: 'pet.created', occurredAt: OCCURRED_AT_EXAMPLE, data: { pet: PET_EXAMPLE } } as const
const UPDATED_EXAMPLE = {
  id: 42,
  type: 'pet.updated',
  occurredAt: '2026-11-25T09:31:12.500Z',
  data: { pet: { ...PET_EXAMPLE, status: 'pending' }, previous: { status: PET_EXAMPLE.status } }
} as const

export const PetCreatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [CREATED_EXAMPLE.id] }),
  type: Type.Literal('pet.created', { description: 'A pet was added (`createPet`).' }),
  occurredAt: occurredAtSchema,
  data: Type.Object({
    pet: Type.Ref(PetSchema)
  }, { additionalProperties: false, description: 'The pet as it was created.' })
}, {
  $id: 'PetCreatedEvent',
  additionalProperties: false,
  description: 'A pet was added. `data.pet` is the pet as `createPet` answered it.',
  examples: [CREATED_EXAMPLE]
})

export const PetChangesSchema = Type.Object({
  name: Type.Optional(nameSchema),
  categoryId: Type.Optional(categoryIdSchema),
  status: Type.Optional(petStatusSchema({ description: 'The status before the change.' }))
}, {
  $id: 'PetChanges',
  additionalProperties: false,
  minProperties: 1,
  description: 'The fields a change changed, each with its value before the change; fields it left alone are absent.',
  examples: [UPDATED_EXAMPLE.data.previous]
})
export type PetChanges = Static<typeof PetChangesSchema>

export const PetUpdatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [UPDATED_EXAMPLE.id] }),
  type: Type.Literal('pet.updated', { description: 'A pet was changed (`updatePet`).' }),
  occurredAt: occurredAtSchema,
  data: Type.Object({
    pet: Type.Ref(PetSchema),
    previous: Type.Ref(PetChangesSchema)
  }, { additionalProperties: false, description: 'The pet after the change, and the values the change replaced.' })
}, {
  $id: 'PetUpdatedEvent',
  additionalProperties: false,
  description: 'A pet was changed. `data.pet` is the pet after the change; `data.previous` holds only the changed fields, with their values ' +
    'before it (so a consumer can act on "became sold" without keeping a copy). A request that changes nothing records no event.',
  examples: [UPDATED_EXAMPLE]
})

export type PetCreatedEvent = Static<typeof PetCreatedEventSchema>
export type PetUpdatedEvent = Static<typeof PetUpdatedEventSchema>
export type Event = PetCreatedEvent | PetUpdatedEvent

/** One event of the feed: one schema per type, told apart by `type` (OpenAPI's discriminator). */
export const EventSchema = Type.Unsafe<Event>({
  $id: 'Event',
  oneOf: [Type.Ref(PetCreatedEventSchema), Type.Ref(PetUpdatedEventSchema)],
  discriminator: {
    propertyName: 'type',
    mapping: { 'pet.created': '#/components/schemas/PetCreatedEvent', 'pet.updated': '#/components/schemas/PetUpdatedEvent' }
  },
  description: 'A change of the catalogue, as the feed (`listEvents`) and webhooks carry it. New types may be added: skip a `type` you do not know.',
  examples: [CREATED_EXAMPLE]
})

export const EventsSchema = Type.Array(Type.Ref(EventSchema), {
  $id: 'Events',
  maxItems: EVENT_PAGE_LIMIT_MAX,
  examples: [[CREATED_EXAMPLE, UPDATED_EXAMPLE]],
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
  type: Type.Optional(Type.Unsafe<EventType>({
    type: 'string',
    enum: [...EVENT_TYPES],
    description: 'Return only events of this type.',
    examples: ['pet.updated']
  }))
}, { additionalProperties: false })
export type ListEventsQuery = Static<typeof ListEventsQuerySchema>
