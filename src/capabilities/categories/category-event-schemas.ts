import { Type, type Static } from '@sinclair/typebox'
import { EVENT_ID_DESCRIPTION, eventIdSchema, occurredAtSchema } from '../../infra/schemas/event-envelope.js'
import type { Int64 } from '../../infra/json/int64.js'
import type { EventTypeRegistration } from '../events/index.js'
import { CATEGORY_EXAMPLE, CATEGORY_NAME_MAX_LENGTH, categoryIdSchema, categoryNameSchema } from './category-schemas.js'

/** A category's record as an event carries it: its id and its name (its pets' counts move with every change of a pet, and are no part of it). */
export interface CategoryRecord { id: Int64, name: string }

/** The example event of the documents: a category given its name. */
export const CATEGORY_UPDATED_EXAMPLE = {
  id: 43,
  type: 'category.updated',
  occurredAt: '2026-11-25T09:32:00.000Z',
  data: { category: { id: CATEGORY_EXAMPLE.id, name: CATEGORY_EXAMPLE.name }, previous: { name: null } }
} as const

export const CategoryRecordSchema = Type.Object({
  id: categoryIdSchema('The category\'s id: the `categoryId` its pets carry.'),
  name: categoryNameSchema
}, {
  $id: 'CategoryRecord',
  additionalProperties: false,
  examples: [CATEGORY_UPDATED_EXAMPLE.data.category],
  description: 'A category\'s id and name, as `putCategory` set them.'
})

export const CategoryUpdatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [CATEGORY_UPDATED_EXAMPLE.id] }),
  type: Type.Literal('category.updated', { description: 'A category was named or renamed (`putCategory`).' }),
  occurredAt: occurredAtSchema,
  data: Type.Object({
    category: Type.Ref(CategoryRecordSchema),
    previous: Type.Object({
      name: Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: CATEGORY_NAME_MAX_LENGTH, description: 'The name before the change; `null` when the category had none (the change created its record).' })
    }, { additionalProperties: false, description: 'The values the change replaced.' })
  }, { additionalProperties: false, description: 'The category as the change left it, and its name before.' })
}, {
  $id: 'CategoryUpdatedEvent',
  additionalProperties: false,
  description: 'A category was named or renamed. `data.category` is its id and name after the change; `data.previous.name` the name before it (`null`: it had none). ' +
    'A request that sets the name the category already has records no event.',
  examples: [CATEGORY_UPDATED_EXAMPLE]
})

export type CategoryUpdatedEvent = Static<typeof CategoryUpdatedEventSchema>

/** The `data` of a `category.updated` event. */
export function categoryUpdatedData (category: CategoryRecord, previousName: string | null): { category: CategoryRecord, previous: { name: string | null } } {
  return { category, previous: { name: previousName } }
}

/** The categories' event type, as the capability registers it with the feed. A category's id is any int64, so its subject may be negative. */
export const CATEGORY_EVENTS: EventTypeRegistration = {
  types: [{
    type: 'category.updated',
    schema: CategoryUpdatedEventSchema,
    example: CATEGORY_UPDATED_EXAMPLE,
    subject: { name: 'category', idPointer: '/data/category/id', idPattern: '^-?[0-9]{1,19}$' }
  }],
  schemas: [CategoryRecordSchema]
}
