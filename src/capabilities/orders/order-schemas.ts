import { Type, type SchemaOptions, type Static, type TUnsafe } from '@sinclair/typebox'
import { PAGE_LIMIT_MAX, pagedListQuerySchema, type PagedListSpec } from '../../infra/http/paged-list.js'
import { STABILITY_KEYWORD } from '../../infra/schemas/keywords.js'
import { petIdSchema } from '../pets/index.js'
import { metadataPatchSchema, metadataSchema } from './order-metadata.js'

export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const
export type OrderStatus = typeof ORDER_STATUSES[number]

/** An OrderStatus schema as a plain string enum (a copy where a description of its own is needed). */
export function orderStatusSchema (options: SchemaOptions = {}): TUnsafe<OrderStatus> {
  return Type.Unsafe<OrderStatus>({ type: 'string', enum: [...ORDER_STATUSES], ...options })
}

export const OrderStatusSchema = orderStatusSchema({
  $id: 'OrderStatus',
  description: 'Where an order is: `placed`, `approved`, `delivered` or `cancelled` (the last two are final).'
})

/** The order the document's examples show. */
export const ORDER_EXAMPLE = { id: 7, petId: 1, status: 'placed', placedAt: '2026-11-25T09:31:12.500Z', metadata: { channel: 'web' } } as const

/** Longest `cancellationReason`, in characters. */
export const CANCELLATION_REASON_MAX_LENGTH = 500
const CANCELLATION_REASON_EXAMPLE = 'The customer changed their mind.'

/** An order time: RFC 3339 in UTC with milliseconds, as the store writes it. */
function orderTimeSchema (description: string, example: string, stability?: 'beta'): ReturnType<typeof Type.String> {
  return Type.String({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
    maxLength: 24,
    description: `${description}, as RFC 3339 in UTC with milliseconds.`,
    examples: [example],
    ...(stability === undefined ? {} : { [STABILITY_KEYWORD]: stability })
  })
}

const transitionTime = (status: string, example: string): ReturnType<typeof Type.String> =>
  orderTimeSchema(`When the order became \`${status}\` (set by \`updateOrder\`); absent until then, and for orders moved before the service recorded it`, example, 'beta')

const cancellationReasonSchema = (description: string): ReturnType<typeof Type.String> => Type.String({
  minLength: 1,
  maxLength: CANCELLATION_REASON_MAX_LENGTH,
  description: `${description} 1 to ${CANCELLATION_REASON_MAX_LENGTH} characters.`,
  examples: [CANCELLATION_REASON_EXAMPLE],
  [STABILITY_KEYWORD]: 'beta'
})

const orderPetIdSchema = (description: string): TUnsafe<number> =>
  Type.Unsafe<number>(petIdSchema({ description, examples: [ORDER_EXAMPLE.petId] }))

/** An order's id as the service assigns it: counted up from 1 (below 2^53, so a number here). */
const orderIdSchema = Type.Unsafe<number>(petIdSchema({ description: 'Unique identifier, assigned by the service when the order is placed: a positive int64.', examples: [ORDER_EXAMPLE.id] }))

export const OrderSchema = Type.Object({
  id: orderIdSchema,
  petId: orderPetIdSchema('The pet the order is for.'),
  status: Type.Ref(OrderStatusSchema),
  placedAt: orderTimeSchema('When the order was placed', ORDER_EXAMPLE.placedAt),
  approvedAt: Type.Optional(transitionTime('approved', '2026-11-25T10:02:00.000Z')),
  deliveredAt: Type.Optional(transitionTime('delivered', '2026-11-26T15:40:00.000Z')),
  cancelledAt: Type.Optional(transitionTime('cancelled', '2026-11-25T11:15:00.000Z')),
  cancellationReason: Type.Optional(cancellationReasonSchema('Why the order was cancelled, as given with the move to `cancelled`; absent when none was given.')),
  metadata: Type.Optional(metadataSchema('Your own key-value pairs, set at placement and changed with `updateOrder`: every order answer carries it (`{}` when empty); ' +
    'absent only from events recorded before orders had metadata.', ORDER_EXAMPLE.metadata))
}, {
  $id: 'Order',
  additionalProperties: false,
  examples: [ORDER_EXAMPLE],
  description: 'An order for one pet. While it is `placed` or `approved` (open), its pet is `pending` and belongs to it.'
})
export type Order = Static<typeof OrderSchema>

export const NewOrderSchema = Type.Object({
  // any positive int64 may be asked for; one no pet has is 422
  petId: petIdSchema({ description: 'The pet to order: it must exist (else 422 `pet_not_found`) and be `available` (else 409 `pet_not_available`).', examples: [ORDER_EXAMPLE.petId] }),
  metadata: Type.Optional(metadataSchema('Your own key-value pairs for the order (default `{}`); beyond the limits, 400 names the field.', ORDER_EXAMPLE.metadata))
}, {
  $id: 'NewOrder',
  additionalProperties: false,
  examples: [{ petId: ORDER_EXAMPLE.petId, metadata: ORDER_EXAMPLE.metadata }],
  description: 'An order to place. Types are strict (no coercion); any field not listed is rejected with 400.'
})
export type NewOrder = Static<typeof NewOrderSchema>

export const OrderPatchSchema = Type.Object({
  status: Type.Optional(orderStatusSchema({ description: 'The new status. Only some transitions are allowed (see `updateOrder`); the status the order already has changes nothing.' })),
  cancellationReason: Type.Optional(cancellationReasonSchema('Why the order is cancelled: accepted only with `"status": "cancelled"` on an order that is not cancelled yet ' +
    '(or repeating the reason it was cancelled with), else 400; it is not changed afterwards.')),
  metadata: Type.Optional(metadataPatchSchema({ channel: 'phone', coupon: null }))
}, {
  $id: 'OrderPatch',
  additionalProperties: false,
  examples: [{ status: 'approved' }, { status: 'cancelled', cancellationReason: CANCELLATION_REASON_EXAMPLE }, { metadata: { channel: 'phone', coupon: null } }],
  description: 'A JSON Merge Patch (RFC 7396) of an order: its `status` (with a `cancellationReason` on the move to `cancelled`) and its `metadata`; ' +
    'fields left out keep their value, `{}` changes nothing. `null` for `status` or `cancellationReason`, `id` and any other field are rejected with 400.'
})
export type OrderPatch = Static<typeof OrderPatchSchema>

export const OrdersSchema = Type.Array(Type.Ref(OrderSchema), {
  $id: 'Orders',
  maxItems: PAGE_LIMIT_MAX,
  examples: [[ORDER_EXAMPLE]],
  description: `Orders ordered by \`id\` ascending, at most ${PAGE_LIMIT_MAX} (one page).`
})

const countSchema = (status: string): ReturnType<typeof Type.Integer> =>
  Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: `How many pets are \`${status}\`.`, examples: [3] })

export const InventorySchema = Type.Object({
  available: countSchema('available'),
  pending: countSchema('pending'),
  sold: countSchema('sold')
}, {
  $id: 'Inventory',
  additionalProperties: false,
  examples: [{ available: 12, pending: 3, sold: 40 }],
  description: 'The number of pets in each status, exact at the moment of the read.'
})
export type Inventory = Static<typeof InventorySchema>

/** listOrders as a paged list: its cursors are bound to `status` and `petId` (an int64's digits). */
export const ORDERS_LIST: PagedListSpec<'status' | 'petId'> = {
  path: '/store/orders',
  secretSetting: 'order_cursor_secret',
  tag: 'o1',
  filters: { status: `(?:${ORDER_STATUSES.join('|')})?`, petId: '\\d{0,19}' }
}

export const ListOrdersQuerySchema = pagedListQuerySchema('orders', {
  status: Type.Optional(orderStatusSchema({ description: 'Restricts the result to orders with that status.', examples: ['placed'] })),
  petId: Type.Optional(petIdSchema({ description: 'Restricts the result to the orders of that pet.', examples: [ORDER_EXAMPLE.petId] }))
})
export type ListOrdersQuery = Static<typeof ListOrdersQuerySchema>

export const OrderIdParamsSchema = Type.Object({
  orderId: petIdSchema({
    description: 'The identifier of the order: a positive int64 in plain decimal digits. An id no order has is 404.',
    examples: [ORDER_EXAMPLE.id]
  })
})
export type OrderIdParams = Static<typeof OrderIdParamsSchema>

/** The schemas of orders, in the order they become the document's components. */
export const ORDER_SCHEMAS = [OrderStatusSchema, OrderSchema, NewOrderSchema, OrderPatchSchema, OrdersSchema, InventorySchema] as const
