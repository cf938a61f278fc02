import { Type, type Static } from '@sinclair/typebox'
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, petIdSchema, petStatusSchema } from './pet-schemas.js'

export const ListPetsQuerySchema = Type.Object({
  // optional for OpenAPI; validation fills in the default, so handlers always see a number
  limit: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: PAGE_LIMIT_MAX,
    default: PAGE_LIMIT_DEFAULT,
    description: `Maximum number of animals returned: an integer from 1 to ${PAGE_LIMIT_MAX}, default ${PAGE_LIMIT_DEFAULT}, ` +
      'written in plain decimal digits (a query parameter is text: `2.0`, `1e1` or `+2` are rejected).',
    examples: [PAGE_LIMIT_DEFAULT]
  })),
  status: Type.Optional(petStatusSchema({
    description: 'Restricts the result to animals with that status.',
    examples: ['available']
  })),
  cursor: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 512,
    description: 'Opaque position from the `next` link of a previous page. Bound to the `status` filter it was issued for; ' +
      'a cursor that was altered or belongs to another query is rejected with 400 `invalid_cursor`.',
    examples: ['eyJhIjoyMH0.c2lnbmF0dXJl']
  }))
}, { additionalProperties: false })
export type ListPetsQuery = Static<typeof ListPetsQuerySchema>

export const PetIdParamsSchema = Type.Object({
  petId: petIdSchema({
    description: 'The identifier of the animal: a positive int64 (1 to 2^63−1) written in plain decimal digits (a path segment is text: `1.0` or `1e0` are rejected). ' +
      'An id no pet has is 404.',
    examples: [1]
  })
})
export type PetIdParams = Static<typeof PetIdParamsSchema>
