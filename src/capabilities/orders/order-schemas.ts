import { Type, type SchemaOptions, type Static, type TUnsafe } from '@sinclair/typebox'
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, petIdSchema } from '../pets/index.js'

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
export const ORDER_EXAMPLE = { id: 7, petId: 1, status: 'placed', placedAt: '2026-11-25T09:31:12.500Z' } as const

const orderPetIdSchema = (description: string): TUnsafe<number> =>
  Type.Unsafe<number>(petIdSchema({ description, examples: [ORDER_EXAMPLE.petId] }))

/** An order's id as the service assigns it: counted up from 1 (below 2^53, so a number here). */
const orderIdSchema = Type.Unsafe<number>(petIdSchema({ description: 'Unique identifier, assigned by the service when the order is placed: a positive int64.', examples: [ORDER_EXAMPLE.id] }))

export const OrderSchema = Type.Object({
  id: orderIdSchema,
  petId: orderPetIdSchema('The pet the order is for.'),
  status: Type.Ref(OrderStatusSchema),
  placedAt: Type.String({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
    maxLength: 24,
    description: 'When the order was placed, as RFC 3339 in UTC with milliseconds.',
    examples: [ORDER_EXAMPLE.placedAt]
  })
}, {
  $id: 'Order',
  additionalProperties: false,
  examples: [ORDER_EXAMPLE],
  description: 'An order for one pet. While it is `placed` or `approved` (open), its pet is `pending` and belongs to it.'
})
export type Order = Static<typeof OrderSchema>

export const NewOrderSchema = Type.Object({
  // any positive int64 may be asked for; one no pet has is 422
  petId: petIdSchema({ description: 'The pet to order: it must exist (else 422 `pet_not_found`) and be `available` (else 409 `pet_not_available`).', examples: [ORDER_EXAMPLE.petId] })
}, {
  $id: 'NewOrder',
  additionalProperties: false,
  examples: [{ petId: ORDER_EXAMPLE.petId }],
  description: 'An order to place. Types are strict (no coercion); any field not listed is rejected with 400.'
})
export type NewOrder = Static<typeof NewOrderSchema>

export const OrderPatchSchema = Type.Object({
  status: orderStatusSchema({ description: 'The new status. Only some transitions are allowed (see `updateOrder`); the status the order already has changes nothing.' })
}, {
  $id: 'OrderPatch',
  additionalProperties: false,
  examples: [{ status: 'approved' }],
  description: 'A JSON Merge Patch (RFC 7396) of an order: its `status`, the one field that may change. `null`, `id` and any other field are rejected with 400.'
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

export const ListOrdersQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: PAGE_LIMIT_MAX,
    default: PAGE_LIMIT_DEFAULT,
    description: `Maximum number of orders returned: an integer from 1 to ${PAGE_LIMIT_MAX}, default ${PAGE_LIMIT_DEFAULT}, in plain decimal digits.`,
    examples: [PAGE_LIMIT_DEFAULT]
  })),
  status: Type.Optional(orderStatusSchema({ description: 'Restricts the result to orders with that status.', examples: ['placed'] })),
  petId: Type.Optional(petIdSchema({ description: 'Restricts the result to the orders of that pet.', examples: [ORDER_EXAMPLE.petId] })),
  cursor: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 512,
    description: 'Opaque position from the `next` link of a previous page. Bound to the `status` and `petId` filters it was issued for; ' +
      'a cursor that was altered or belongs to another query is rejected with 400 `invalid_cursor`.',
    examples: ['eyJhIjoyMH0.c2lnbmF0dXJl']
  }))
}, { additionalProperties: false })
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
