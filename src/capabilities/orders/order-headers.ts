import { Type } from '@sinclair/typebox'
import { ifMatchHeaderSchema, ifNoneMatchHeaderSchema } from '../../infra/http/tagged-answers.js'
import { idempotencyKeyHeaderSchema } from '../idempotency/index.js'

/** Request headers of `placeOrder`. */
export const PlaceOrderHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(idempotencyKeyHeaderSchema('order'))
})

/** Request headers of `getOrder`. */
export const GetOrderHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(ifNoneMatchHeaderSchema())
})

/** Request headers of `updateOrder`. */
export const UpdateOrderHeadersSchema = Type.Object({
  'if-match': Type.Optional(ifMatchHeaderSchema('Makes the change conditional: the `ETag` of the order as the client last saw it (from `getOrder` or `updateOrder`), a list of tags, or `*`. ' +
    'When the order\'s current tag is not among them (strong comparison), the answer is 412 `precondition_failed` and nothing changes.'))
})
