import type { PetStatus } from '../pets/index.js'
import type { Order, OrderStatus } from './order-schemas.js'
import { isAllowedOrderTransition, ORDERABLE_PET_STATUS, PET_STATUS_OF_ORDER } from './order-transitions.js'

/** Whether the order as it is now may be changed: the `If-Match` check, judged on the row the store locked. */
export type OrderPrecondition = (current: Order) => boolean

/** What a store's placeOrder did. */
export type PlaceOrderOutcome =
  | { outcome: 'placed', order: Order }
  | { outcome: 'pet_not_found' }
  | { outcome: 'pet_not_available', petStatus: PetStatus }

/** What a store's updateOrder did. */
export type OrderUpdateOutcome =
  /** `order` as it now is and `previous` as it was (equal when nothing changed); `petStatus`: the pet's new status, when it moved. */
  | { outcome: 'updated', order: Order, previous: Order, petStatus: PetStatus | undefined }
  | { outcome: 'not_found' }
  | { outcome: 'precondition_failed' }
  | { outcome: 'invalid_transition', from: OrderStatus, to: OrderStatus }

/** Whether a pet with `petStatus` (undefined: no such pet) may be ordered, judged on the pet's locked row. */
export function decidePlacement (petStatus: PetStatus | undefined): { outcome: 'orderable' } | { outcome: 'pet_not_found' } | { outcome: 'pet_not_available', petStatus: PetStatus } {
  if (petStatus === undefined) return { outcome: 'pet_not_found' }
  if (petStatus !== ORDERABLE_PET_STATUS) return { outcome: 'pet_not_available', petStatus }
  return { outcome: 'orderable' }
}

/**
 * The one rule of an order's update, shared by both stores, judged on the order as the store's
 * transaction read it: a missing order first, then `If-Match`, then the transition. A move gives the pet
 * the status {@link PET_STATUS_OF_ORDER} names when it differs from the one before.
 */
export function decideOrderUpdate (current: Order | undefined, status: OrderStatus, precondition?: OrderPrecondition): OrderUpdateOutcome {
  if (current === undefined) return { outcome: 'not_found' }
  if (precondition !== undefined && !precondition(current)) return { outcome: 'precondition_failed' }
  if (!isAllowedOrderTransition(current.status, status)) return { outcome: 'invalid_transition', from: current.status, to: status }
  const order: Order = { ...current, status }
  const before = PET_STATUS_OF_ORDER[current.status]
  const after = PET_STATUS_OF_ORDER[status]
  return { outcome: 'updated', order, previous: current, petStatus: before === after ? undefined : after }
}
