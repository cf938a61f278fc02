import { Type, type Static } from '@sinclair/typebox'
import { EVENT_ID_DESCRIPTION, eventIdSchema, occurredAtSchema } from '../../infra/schemas/event-envelope.js'
import type { EventTypeRegistration } from '../events/index.js'
import { metadataSchema, sameMetadata } from './order-metadata.js'
import { ORDER_EXAMPLE, orderStatusSchema, OrderSchema, type Order, type OrderStatus } from './order-schemas.js'

export const ORDER_CREATED_EXAMPLE = { id: 43, type: 'order.created', occurredAt: ORDER_EXAMPLE.placedAt, data: { order: ORDER_EXAMPLE } } as const
/** The example events of the document: an order approved, then its metadata changed alone. */
export const ORDER_UPDATED_EXAMPLE = {
  id: 44,
  type: 'order.updated',
  occurredAt: '2026-11-25T10:02:00.000Z',
  data: {
    order: { ...ORDER_EXAMPLE, status: 'approved', approvedAt: '2026-11-25T10:02:00.000Z' },
    previousStatus: ORDER_EXAMPLE.status,
    previous: { status: ORDER_EXAMPLE.status }
  }
} as const
const ORDER_METADATA_UPDATED_EXAMPLE = {
  id: 45,
  type: 'order.updated',
  occurredAt: '2026-11-25T10:05:30.000Z',
  data: {
    order: { ...ORDER_UPDATED_EXAMPLE.data.order, metadata: { channel: 'phone', coupon: 'SPRING' } },
    previousStatus: ORDER_UPDATED_EXAMPLE.data.order.status,
    previous: { metadata: ORDER_EXAMPLE.metadata }
  }
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

export const OrderChangesSchema = Type.Object({
  status: Type.Optional(orderStatusSchema({ description: 'The status before the change.' })),
  metadata: Type.Optional(metadataSchema('The metadata before the change, whole: every key it had, changed or not.', ORDER_EXAMPLE.metadata))
}, {
  $id: 'OrderChanges',
  additionalProperties: false,
  minProperties: 1,
  description: 'The fields of the order a change changed, each with its value before the change; fields it left alone are absent. ' +
    'The time and `cancellationReason` a move of status sets were absent before it, so they never appear here.',
  examples: [ORDER_UPDATED_EXAMPLE.data.previous, ORDER_METADATA_UPDATED_EXAMPLE.data.previous]
})
export type OrderChanges = Static<typeof OrderChangesSchema>

export const OrderUpdatedEventSchema = Type.Object({
  id: eventIdSchema({ description: EVENT_ID_DESCRIPTION, examples: [ORDER_UPDATED_EXAMPLE.id] }),
  type: Type.Literal('order.updated', { description: 'An order\'s status or metadata changed (`updateOrder`).' }),
  occurredAt: Type.Unsafe<string>(occurredAtSchema),
  data: Type.Object({
    order: Type.Ref(OrderSchema),
    previousStatus: orderStatusSchema({ description: 'The order\'s status before the change (equal to `order.status` when only its metadata changed).' }),
    // optional only because events recorded before it was added lack it
    previous: Type.Optional(Type.Ref(OrderChangesSchema))
  }, { additionalProperties: false, description: 'The order after the change, its status before it, and the values the change replaced.' })
}, {
  $id: 'OrderUpdatedEvent',
  additionalProperties: false,
  description: 'An order\'s status or metadata changed; `data.order` carries it whole (its times, `cancellationReason`, `metadata`), and `data.previous` ' +
    'holds only the fields that changed, with their values before it (`status`, `metadata`), as `pet.updated` does. Recorded in the ' +
    'transaction of the change, beside the `pet.updated` of its pet when the pet\'s status moved (`delivered`: sold; `cancelled`: available). ' +
    'A request that changes nothing records none. `data.previous` is absent only from events recorded before it was added.',
  examples: [ORDER_UPDATED_EXAMPLE, ORDER_METADATA_UPDATED_EXAMPLE]
})

export type OrderCreatedEvent = Static<typeof OrderCreatedEventSchema>
export type OrderUpdatedEvent = Static<typeof OrderUpdatedEventSchema>

/** The `data` of an `order.created` event. */
export function orderCreatedData (order: Order): { order: Order } {
  return { order }
}

/** The `data` of an `order.updated` event: the order after the change, its status before it, and the changed fields as they were before it. */
export function orderUpdatedData (previous: Order, order: Order): { order: Order, previousStatus: OrderStatus, previous: OrderChanges } {
  const changes: OrderChanges = {}
  if (previous.status !== order.status) changes.status = previous.status
  if (!sameMetadata(previous.metadata ?? {}, order.metadata ?? {})) changes.metadata = previous.metadata ?? {}
  return { order, previousStatus: previous.status, previous: changes }
}

/** The orders' event types, as the orders capability registers them with the feed (in the documents' order). */
export const ORDER_EVENTS: EventTypeRegistration = {
  types: [
    { type: 'order.created', schema: OrderCreatedEventSchema, example: ORDER_CREATED_EXAMPLE, subject: { name: 'order', idPointer: '/data/order/id' } },
    { type: 'order.updated', schema: OrderUpdatedEventSchema, example: ORDER_UPDATED_EXAMPLE, subject: { name: 'order', idPointer: '/data/order/id' } }
  ],
  schemas: [OrderChangesSchema]
}
