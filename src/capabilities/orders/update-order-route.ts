import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { acceptMergePatchBodies } from '../../infra/http/content-types.js'
import { answerConditionalChange, MERGE_PATCH_CONSUMES, mergePatchResponses } from '../../infra/http/merge-patch-route.js'
import { errorResponse } from '../../infra/schemas/responses.js'
import { UpdateOrderHeadersSchema } from './order-headers.js'
import {
  cancellationReasonRefusedMessage, cancellationReasonWithoutCancelMessage, orderInvalidTransitionMessage, orderNotFoundMessage, orderPreconditionFailedMessage,
  tooManyMetadataKeysMessage
} from './order-messages.js'
import { METADATA_MAX_KEYS } from './order-metadata.js'
import { ORDER_EXAMPLE, ORDER_STATUSES, OrderIdParamsSchema, OrderPatchSchema, OrderSchema, type Order } from './order-schemas.js'
import { describeOrderTransitions, PET_STATUS_OF_ORDER } from './order-transitions.js'

/** `PATCH /store/orders/{orderId}` (updateOrder, beta): moves an order's status, and its pet's with it, with `If-Match`. */
const updateOrder: FastifyPluginAsyncTypebox = async (app) => {
  acceptMergePatchBodies(app)

  app.patch('/store/orders/:orderId', {
    schema: {
      operationId: 'updateOrder',
      tags: ['store'],
      summary: 'Move an order (beta)',
      description: 'Changes the order\'s `status` and `metadata` — a JSON Merge Patch (RFC 7396) sent as `application/merge-patch+json` or `application/json` — and answers ' +
        `the order as it now is, with its \`ETag\`. Transitions: ${describeOrderTransitions()}; \`delivered\` and \`cancelled\` are final. ` +
        `The pet moves with it in the same transaction: \`delivered\` makes it \`${PET_STATUS_OF_ORDER.delivered}\`, \`cancelled\` \`${PET_STATUS_OF_ORDER.cancelled}\`; ` +
        '`order.updated` and the pet\'s `pet.updated` are recorded. A move sets the time of the new status (`approvedAt`, `deliveredAt`, `cancelledAt`); ' +
        'the move to `cancelled` may carry a `cancellationReason`. A patch of `metadata` alone records `order.updated` and leaves the pet alone. ' +
        'Setting the status the order already has, or metadata it already has, changes nothing and records nothing. ' +
        'With `If-Match`, the change is made only if the order still has that tag (else 412). The change is durable before 200 is sent.',
      'x-stability': 'beta',
      consumes: MERGE_PATCH_CONSUMES,
      params: OrderIdParamsSchema,
      headers: UpdateOrderHeadersSchema,
      body: Type.Ref(OrderPatchSchema),
      response: mergePatchResponses({
        resource: Type.Ref(OrderSchema),
        changed: 'The order as it now is.',
        badRequest: errorResponse('`orderId` is not a positive integer, the body is not a valid patch (`status` not a status, `null` where a value is needed, ' +
          '`metadata` beyond its limits, also after the merge, `cancellationReason` without the move to `cancelled`, or an unknown field), ' +
          'or `If-Match` is malformed (`invalid_request`, naming the field); or the body is not JSON (`malformed_json`). Nothing changed.', undefined,
        { invalid_request: `body: field "status" must be one of ${ORDER_STATUSES.map((status) => JSON.stringify(status)).join(', ')}` }),
        notFound: errorResponse('No order has this id (`order_not_found`).', undefined, { order_not_found: orderNotFoundMessage(ORDER_EXAMPLE.id) }),
        conflict: errorResponse(`The order cannot move from its status to the one asked for (\`invalid_transition\`): only ${describeOrderTransitions()} are allowed. Nothing changed.`,
          undefined, { invalid_transition: orderInvalidTransitionMessage(ORDER_EXAMPLE.id, 'delivered', 'cancelled') }),
        preconditionFailed: errorResponse('`If-Match` does not match the order\'s current `ETag` (`precondition_failed`): it changed since. Nothing changed.',
          undefined, { precondition_failed: orderPreconditionFailedMessage(ORDER_EXAMPLE.id) })
      })
    }
  }, async (request, reply) => {
    const { orderId } = request.params
    const { status, cancellationReason, metadata } = request.body
    if (cancellationReason !== undefined && status !== 'cancelled') throw new ApiError('invalid_request', cancellationReasonWithoutCancelMessage())
    return await answerConditionalChange(reply, {
      ifMatch: request.headers['if-match'],
      schemaName: 'Order',
      change: async (precondition) => await app.orderStore.updateOrder(orderId, { status, cancellationReason, metadata }, precondition),
      changed: (result): Order => {
        switch (result.outcome) {
          case 'not_found': throw new ApiError('order_not_found', orderNotFoundMessage(orderId))
          case 'precondition_failed': throw new ApiError('precondition_failed', orderPreconditionFailedMessage(orderId))
          case 'invalid_transition': throw new ApiError('invalid_transition', orderInvalidTransitionMessage(orderId, result.from, result.to))
          case 'cancellation_reason_refused': throw new ApiError('invalid_request', cancellationReasonRefusedMessage(orderId, result.reason))
          case 'too_many_metadata_keys': throw new ApiError('invalid_request', tooManyMetadataKeysMessage(result.keys, METADATA_MAX_KEYS))
        }
        return result.order
      }
    })
  })
}

export default updateOrder
