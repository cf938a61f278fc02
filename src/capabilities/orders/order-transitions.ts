import type { PetStatus } from '../pets/index.js'
import type { OrderStatus } from './order-schemas.js'

/** Where each order status may move to (besides staying as it is): the one rule of an order's lifecycle. */
export const ORDER_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  placed: ['approved', 'cancelled'],
  approved: ['delivered', 'cancelled'],
  delivered: [],
  cancelled: []
}

/** The status an order gives its pet: open orders hold it `pending`, a delivery sells it, a cancellation frees it. */
export const PET_STATUS_OF_ORDER: Readonly<Record<OrderStatus, PetStatus>> = {
  placed: 'pending',
  approved: 'pending',
  delivered: 'sold',
  cancelled: 'available'
}

/** The order statuses that hold their pet: at most one order of a pet is in one of them (the database enforces it). */
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = ['placed', 'approved']

/** The status a pet must have for an order to be placed for it. */
export const ORDERABLE_PET_STATUS: PetStatus = 'available'

/** Whether an order whose status is `from` may be given `to`; keeping the status it has is always allowed. */
export function isAllowedOrderTransition (from: OrderStatus, to: OrderStatus): boolean {
  return from === to || ORDER_TRANSITIONS[from].includes(to)
}

/** The allowed transitions in prose, for the document and messages: "`placed` → `approved`, …". */
export function describeOrderTransitions (): string {
  return (Object.keys(ORDER_TRANSITIONS) as OrderStatus[]).flatMap((from) => ORDER_TRANSITIONS[from].map((to) => `\`${from}\` → \`${to}\``)).join(', ')
}
