import { Type } from '@sinclair/typebox'
import { ifMatchHeaderSchema, ifNoneMatchHeaderSchema } from '../../infra/http/tagged-answers.js'
import { idempotencyKeyHeaderSchema } from '../idempotency/index.js'

/** Request headers of `createPet` (names in lower case: Node hands them to validation so). */
export const CreatePetHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(idempotencyKeyHeaderSchema('pet'))
})

/** Request headers of `getPet`. */
export const GetPetHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(ifNoneMatchHeaderSchema())
})

/** Request headers of `updatePet`. */
export const UpdatePetHeadersSchema = Type.Object({
  'if-match': Type.Optional(ifMatchHeaderSchema('Makes the change conditional: the `ETag` of the pet as the client last saw it (from `updatePet` or `getPet`), ' +
    'a list of tags, or `*` (any current pet). When the pet\'s current tag is not among them (strong comparison: a `W/` tag never matches), ' +
    'the answer is 412 `precondition_failed` and nothing changes.'))
})
