import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { answerConditionalGet, sendTagged, serializeAnswer } from '../../infra/http/tagged-answers.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { nextLinkHeader, pagedListBadRequest, PAGE_LIMIT_DEFAULT } from '../../infra/http/paged-list.js'
import { commonErrorResponses, errorResponse, ETAG_HEADER, RETRY_AFTER_HEADER } from '../../infra/schemas/responses.js'
import { fingerprintOf, type IdempotencyCompletion } from '../idempotency/index.js'
import { GetOrderHeadersSchema, PlaceOrderHeadersSchema } from './order-headers.js'
import { sortedMetadata } from './order-metadata.js'
import { orderedPetNotFoundMessage, orderNotFoundMessage, petNotAvailableMessage } from './order-messages.js'
import { InventorySchema, ListOrdersQuerySchema, NewOrderSchema, ORDER_EXAMPLE, ORDERS_LIST, OrderIdParamsSchema, OrderSchema, OrdersSchema, type Order } from './order-schemas.js'
import type { PlaceOrderOutcome } from './order-decisions.js'
import updateOrder from './update-order-route.js'

/** The answer of a placement that placed nothing: the order's Error. */
function refusal (petId: bigint | number, outcome: Exclude<PlaceOrderOutcome, { outcome: 'placed' }>): ApiError {
  return outcome.outcome === 'pet_not_found'
    ? new ApiError('pet_not_found', orderedPetNotFoundMessage(petId), {}, 422)
    : new ApiError('pet_not_available', petNotAvailableMessage(petId, outcome.petStatus))
}

/** `/store/orders` and `/store/inventory` (beta): orders reserve, sell or free a pet; the inventory counts pets by status. */
const ordersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/store/orders', {
    schema: {
      operationId: 'listOrders',
      tags: ['store'],
      summary: 'List orders (beta)',
      description: 'Returns at most `limit` orders in `id` order, optionally only those with `status` and only those of `petId`. ' +
        'When more match, a `Link: <…>; rel="next"` header points at the next page.',
      'x-stability': 'beta',
      querystring: ListOrdersQuerySchema,
      response: {
        200: { ...Type.Ref(OrdersSchema), description: 'A page of orders (a bare array).', headers: { Link: nextLinkHeader(ORDERS_LIST.path, 'orders') } },
        400: pagedListBadRequest(['status', 'petId']),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { limit = PAGE_LIMIT_DEFAULT, status, petId, cursor } = request.query
    const filters = { status, petId: petId === undefined ? undefined : String(petId) }
    const page = await app.orderStore.listOrders({ status, petId, afterId: app.orderList.after(cursor, filters), limit })
    const last = page.orders.at(-1)
    if (page.hasMore && last !== undefined) reply.header('link', app.orderList.nextLink(baseUrlFor(app.config, request.host), limit, filters, last.id))
    return page.orders
  })

  app.post('/store/orders', {
    schema: {
      operationId: 'placeOrder',
      tags: ['store'],
      summary: 'Order a pet (beta)',
      description: 'Places an order for an `available` pet: in one transaction the order is created `placed`, the pet becomes `pending`, and ' +
        '`order.created` and the pet\'s `pet.updated` are recorded. A pet has at most one open (`placed` or `approved`) order, which the database ' +
        'enforces: of simultaneous orders for one pet exactly one succeeds, the others get 409 `pet_not_available`. The write is durable before 201 is sent. ' +
        'The 201 carries the order\'s `ETag` (as `getOrder` would give it), so the order can be changed at once with `If-Match`.',
      'x-stability': 'beta',
      headers: PlaceOrderHeadersSchema,
      body: Type.Ref(NewOrderSchema),
      response: {
        201: {
          ...Type.Ref(OrderSchema),
          description: 'Order placed (or, for a repeated `Idempotency-Key`, the answer the first request got, with the tag of the order as it was then).',
          headers: {
            ETag: { ...ETAG_HEADER, description: 'Strong entity tag of the order in this answer, the one `getOrder` gives it: send it in `If-Match` to make an `updateOrder` conditional.' },
            Location: { type: 'string', description: 'Path of the new order: `/v1/store/orders/{id}`.', pattern: '^/v1/store/orders/[1-9][0-9]{0,18}$', maxLength: 36, example: '/v1/store/orders/7' },
            'Idempotent-Replayed': { type: 'string', description: '`true` when this answer is a replay of an earlier request with the same `Idempotency-Key`; nothing new was placed.', enum: ['true'], example: 'true' }
          }
        },
        400: errorResponse('The body is missing `petId`, has an invalid value (`metadata` beyond its limits: the message names the key, as `metadata.channel`) or an unknown field, the `Idempotency-Key` header is malformed, ' +
          'a query parameter was sent (`invalid_request`), or the body is not JSON (`malformed_json`).', undefined, {
          invalid_request: 'body: field "petId" is required',
          malformed_json: 'The request body is not valid JSON: Unexpected end of JSON input'
        }),
        409: errorResponse('The pet is not `available` (`pet_not_available`; the message says its status), or a request with the same `Idempotency-Key` ' +
          'is still being processed (`idempotency_request_in_progress`; retry after `Retry-After` seconds). Nothing changed.', { 'Retry-After': RETRY_AFTER_HEADER },
        { pet_not_available: petNotAvailableMessage(ORDER_EXAMPLE.petId, 'pending') }),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8, or it has a `Content-Encoding` (`unsupported_media_type`).'),
        422: errorResponse('No pet has `petId` (`pet_not_found`), or the `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).',
          undefined, { pet_not_found: orderedPetNotFoundMessage(ORDER_EXAMPLE.petId) }, 422),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { petId } = request.body
    const metadata = sortedMetadata(request.body.metadata ?? {})
    // empty metadata is no metadata, and a key used before orders had metadata still matches its body
    const fingerprint = (): string => fingerprintOf(Object.keys(metadata).length === 0 ? ['placeOrder', petId] : ['placeOrder', petId, metadata])
    const order = await app.idempotentCreates.createOnce(request, reply, fingerprint, async (completing?: IdempotencyCompletion): Promise<Order> => {
      const outcome = await app.orderStore.placeOrder(petId, metadata, completing)
      if (outcome.outcome !== 'placed') throw refusal(petId, outcome)
      return outcome.order
    })
    reply.header('location', `/v1/store/orders/${order.id}`)
    return sendTagged(reply, serializeAnswer(reply, order, 'Order'))
  })

  app.get('/store/orders/:orderId', {
    schema: {
      operationId: 'getOrder',
      tags: ['store'],
      summary: 'Get an order (beta)',
      description: 'Returns the order with its `ETag`; with `If-None-Match` holding that tag, 304 while it has not changed.',
      'x-stability': 'beta',
      params: OrderIdParamsSchema,
      headers: GetOrderHeadersSchema,
      response: {
        200: { ...Type.Ref(OrderSchema), description: 'The order.', headers: { ETag: ETAG_HEADER } },
        304: { type: 'null', description: 'The order still matches the `If-None-Match` tag; no body.', headers: { ETag: { ...ETAG_HEADER, description: 'The matching entity tag.' } } },
        400: errorResponse('`orderId` is not a positive integer, or a query parameter was sent (`invalid_request`).', undefined,
          { invalid_request: 'path parameter "orderId" must be >= 1' }),
        404: errorResponse('No order has this id (`order_not_found`).', undefined, { order_not_found: orderNotFoundMessage(ORDER_EXAMPLE.id) }),
        ...commonErrorResponses()
      }
    },
    onSend: (request, reply, payload, done) => {
      done(null, answerConditionalGet(request, reply, payload))
    }
  }, async (request) => {
    const order = await app.orderStore.findOrderById(request.params.orderId)
    if (order === undefined) throw new ApiError('order_not_found', orderNotFoundMessage(request.params.orderId))
    return order
  })

  app.get('/store/inventory', {
    schema: {
      operationId: 'getInventory',
      tags: ['store'],
      summary: 'Count pets by status (beta)',
      description: 'The number of pets in each status, exact at the moment of the read: counts kept by the database in the transaction of every change of a pet, ' +
        'so reading them costs the same for ten pets or a million.',
      'x-stability': 'beta',
      response: {
        200: { ...Type.Ref(InventorySchema), description: 'The counts.' },
        400: errorResponse('A query parameter was sent; this operation takes none (`invalid_request`).', undefined,
          { invalid_request: 'query parameter "status" is unknown; this operation takes no query parameters' }),
        ...commonErrorResponses()
      }
    }
  }, async () => await app.petStore.countPetsByStatus())

  await app.register(updateOrder)

  allowOnly(app, '/store/orders', ['GET', 'POST'])
  allowOnly(app, '/store/orders/:orderId', ['GET', 'PATCH'])
  allowOnly(app, '/store/inventory', ['GET'])
}

export default ordersRoutes
