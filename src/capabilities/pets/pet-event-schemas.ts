import { Type, type Static } from '@sinclair/typebox'
import { EVENT_ID_DESCRIPTION, eventIdSchema, OCCURRED_AT_EXAMPLE, occurredAtSchema } from '../../infra/schemas/event-envelope.js'
import type { EventTypeRegistration } from '../events/index.js'
import { categoryIdSchema, nameSchema, PET_EXAMPLE, petStatusSchema, PetSchema } from './pet-schemas.js'

/** The example events of the document: a pet created, then reserved. */
export const PET_CREATED_EXAMPLE = { id: 41, type: 'pet.created', occurredAt: OCCURRED_AT_EXAMPLE, data: { pet: PET_EXAMPLE } } as const
export const PET_UPDATED_EXAMPLE = {
  id: 42,
  type: 'pet.updated',
  occurredAt: '2026-11-25T09:31:12.500Z',
  data: { pet: { ...PET_EXAMPLE, status: 'pending' }, previous: { status: PET_EXAMPLE.status } }
} as const

export const PetCreatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [PET_CREATED_EXAMPLE.id] }),
  type: Type.Literal('pet.created', { description: 'A pet was added (`createPet`).' }),
  occurredAt: occurredAtSchema,
  data: Type.Object({
    pet: Type.Ref(PetSchema)
  }, { additionalProperties: false, description: 'The pet as it was created.' })
}, {
  $id: 'PetCreatedEvent',
  additionalProperties: false,
  description: 'A pet was added. `data.pet` is the pet as `createPet` answered it.',
  examples: [PET_CREATED_EXAMPLE]
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
  examples: [PET_UPDATED_EXAMPLE.data.previous]
})
export type PetChanges = Static<typeof PetChangesSchema>

export const PetUpdatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [PET_UPDATED_EXAMPLE.id] }),
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
  examples: [PET_UPDATED_EXAMPLE]
})

export type PetCreatedEvent = Static<typeof PetCreatedEventSchema>
export type PetUpdatedEvent = Static<typeof PetUpdatedEventSchema>

/** The pets' event types, as the pets capability registers them with the feed (in the documents' order). */
export const PET_EVENTS: EventTypeRegistration = {
  types: [
    { type: 'pet.created', schema: PetCreatedEventSchema, example: PET_CREATED_EXAMPLE, subject: { name: 'pet', idPointer: '/data/pet/id' } },
    { type: 'pet.updated', schema: PetUpdatedEventSchema, example: PET_UPDATED_EXAMPLE, subject: { name: 'pet', idPointer: '/data/pet/id' } }
  ],
  schemas: [PetChangesSchema]
}
