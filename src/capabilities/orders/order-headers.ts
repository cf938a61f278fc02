import { Type } from '@sinclair/typebox'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { idempotencyKeyHeaderSchema } from '../idempotency/index.js'
import { ENTITY_TAG_LIST_PATTERN } from '../pets/index.js'

const ENTITY_TAG_LIST_MAX_LENGTH = 4096

/** Request headers of `placeOrder`. */
export const PlaceOrderHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(idempotencyKeyHeaderSchema('order'))
})

/** Request headers of `getOrder`. */
export const GetOrderHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    description: `An \`ETag\` from an earlier answer (or a list of them, or \`*\`): when it still matches, the answer is 304 with no body. At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
  }))
})

/** Request headers of `updateOrder`. */
export const UpdateOrderHeadersSchema = Type.Object({
  'if-match': Type.Optional(Type.String({
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    pattern: ENTITY_TAG_LIST_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: '* or a comma-separated list of quoted entity tags, such as "3q2-7w"',
    description: 'Makes the change conditional: the `ETag` of the order as the client last saw it (from `getOrder` or `updateOrder`), a list of tags, or `*`. ' +
      `When the order's current tag is not among them (strong comparison), the answer is 412 \`precondition_failed\` and nothing changes. At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
  }))
})
