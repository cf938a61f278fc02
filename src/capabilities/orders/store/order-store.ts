import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { OrderChange, OrderPrecondition, OrderUpdateOutcome, PlaceOrderOutcome } from '../order-decisions.js'
import type { Metadata } from '../order-metadata.js'
import type { Order, OrderStatus } from '../order-schemas.js'

/** One page of orders, in id order, after `afterId`, optionally only one status and one pet's. */
export interface OrderPageQuery {
  status?: OrderStatus | undefined
  petId?: Int64 | undefined
  afterId?: number | undefined
  limit: number
}

export interface OrderPage {
  orders: Order[]
  /** True when at least one more order matches after the last one in `orders`. */
  hasMore: boolean
}

/**
 * The orders as stored. One implementation per engine; every change of an order changes its pet's status
 * and records both events in one transaction, and moves the pets' list version.
 */
export interface OrderStore {
  /**
   * Places an order for the pet, in one transaction: reads the pet locked, judges it with `decidePlacement`,
   * inserts the order (the database refuses a second open order of a pet), makes the pet `pending`, records
   * `pet.updated` and `order.created`, and with `completing` completes the Idempotency-Key claim (a claim no
   * longer held throws IdempotencyClaimLostError and writes nothing). Resolves once durable.
   */
  placeOrder (petId: Int64, metadata: Metadata, completing?: IdempotencyCompletion): Promise<PlaceOrderOutcome>
  /** `id` may be any int64; only ids the store assigned find an order. */
  findOrderById (id: Int64): Promise<Order | undefined>
  listOrders (query: OrderPageQuery): Promise<OrderPage>
  /**
   * Changes an order in one transaction: reads it locked, judges it with `decideOrderUpdate`
   * (`precondition`, the If-Match check, on that row), and writes only when its status or metadata
   * changes: the order and `order.updated`, and when the pet's status moves, the pet and its
   * `pet.updated`. Resolves once durable.
   */
  updateOrder (id: Int64, change: OrderChange, precondition?: OrderPrecondition): Promise<OrderUpdateOutcome>
}
