import { Type, type Static } from '@sinclair/typebox'
import { pagedListQuerySchema, type PagedListSpec } from '../../infra/http/paged-list.js'
import { PET_STATUSES, petIdSchema, petStatusSchema } from './pet-schemas.js'

/** listPets as a paged list: its cursors are bound to `status`. */
export const PETS_LIST: PagedListSpec<'status'> = {
  path: '/pets',
  secretSetting: 'cursor_secret',
  tag: 'v1',
  filters: { status: `(?:${PET_STATUSES.join('|')})?` }
}

export const ListPetsQuerySchema = pagedListQuerySchema('animals', {
  status: Type.Optional(petStatusSchema({
    description: 'Restricts the result to animals with that status.',
    examples: ['available']
  }))
})
export type ListPetsQuery = Static<typeof ListPetsQuerySchema>

export const PetIdParamsSchema = Type.Object({
  petId: petIdSchema({
    description: 'The identifier of the animal: a positive int64 (1 to 2^63−1) written in plain decimal digits (a path segment is text: `1.0` or `1e0` are rejected). ' +
      'An id no pet has is 404.',
    examples: [1]
  })
})
export type PetIdParams = Static<typeof PetIdParamsSchema>
