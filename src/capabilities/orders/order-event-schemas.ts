import { Type, type Static } from '@sinclair/typebox'
import { EVENT_ID_DESCRIPTION, eventIdSchema, occurredAtSchema } from '../../infra/schemas/event-envelope.js'
import type { EventTypeRegistration } from '../events/index.js'
import { ORDER_EXAMPLE, orderStatusSchema, OrderSchema, type Order, type OrderStatus } from './order-schemas.js'

export const ORDER_CREATED_EXAMPLE = { id: 43, type: 'order.created', occurredAt: ORDER_EXAMPLE.placedAt, data: { order: ORDER_EXAMPLE } } as const
export const ORDER_UPDATED_EXAMPLE = {
  id: 44,
  type: 'order.updated',
  occurredAt: '2026-11-25T10:02:00.000Z',
  data: { order: { ...ORDER_EXAMPLE, status: 'approved', approvedAt: '2026-11-25T10:02:00.000Z' }, previousStatus: ORDER_EXAMPLE.status }
} as const

export const OrderCreatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [ORDER_CREATED_EXAMPLE.id] }),
  type: Type.Literal('order.created', { description: 'An order was placed (`placeOrder`).' }),
  occurredAt: Type.Unsafe<string>(occurredAtSchema),
  data: Type.Object({
    order: Type.Ref(OrderSchema)
  }, { additionalProperties: false, description: 'The order as it was placed.' })
}, {
  $id: 'OrderCreatedEvent',
  additionalProperties: false,
  description: 'An order was placed. Recorded in the transaction that placed it, beside the `pet.updated` of its pet becoming `pending`.',
  examples: [ORDER_CREATED_EXAMPLE]
})

export const OrderUpdatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [ORDER_UPDATED_EXAMPLE.id] }),
  type: Type.Literal('order.updated', { description: 'An order\'s status or metadata changed (`updateOrder`).' }),
  occurredAt: Type.Unsafe<string>(occurredAtSchema),
  data: Type.Object({
    order: Type.Ref(OrderSchema),
    previousStatus: orderStatusSchema({ description: 'The order\'s status before the change (equal to `order.status` when only its metadata changed).' })
  }, { additionalProperties: false, description: 'The order after the change, and its status before it.' })
}, {
  $id: 'OrderUpdatedEvent',
  additionalProperties: false,
  description: 'An order\'s status or metadata changed; `data.order` carries it whole (its times, `cancellationReason`, `metadata`). Recorded in the ' +
    'transaction of the change, beside the `pet.updated` of its pet when the pet\'s status moved (`delivered`: sold; `cancelled`: available). ' +
    'A request that changes nothing records none.',
  examples: [ORDER_UPDATED_EXAMPLE]
})

export type OrderCreatedEvent = Static<typeof OrderCreatedEventSchema>
export type OrderUpdatedEvent = Static<typeof OrderUpdatedEventSchema>

/** The `data` of an `order.created` event. */
export function orderCreatedData (order: Order): { order: Order } {
  return { order }
}

/** The `data` of an `order.updated` event. */
export function orderUpdatedData (order: Order, previousStatus: OrderStatus): { order: Order, previousStatus: OrderStatus } {
  return { order, previousStatus }
}

/** The orders' event types, as the orders capability registers them with the feed (in the documents' order). */
export const ORDER_EVENTS: EventTypeRegistration = {
  types: [
    { type: 'order.created', schema: OrderCreatedEventSchema, example: ORDER_CREATED_EXAMPLE, subject: { name: 'order', idPointer: '/data/order/id' } },
    { type: 'order.updated', schema: OrderUpdatedEventSchema, example: ORDER_UPDATED_EXAMPLE, subject: { name: 'order', idPointer: '/data/order/id' } }
  ]
}
