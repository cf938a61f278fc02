import type { PetStatus } from '../pets/index.js'
import type { Order, OrderStatus } from './order-schemas.js'
import { mergeMetadata, METADATA_MAX_KEYS, sameMetadata, type MetadataPatch } from './order-metadata.js'
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
  /** `cancellationReason` on an order that was already cancelled, differing from the reason it has. */
  | { outcome: 'cancellation_reason_refused', reason: string | undefined }
  /** The metadata after the patch would hold `keys` keys, more than {@link METADATA_MAX_KEYS}. */
  | { outcome: 'too_many_metadata_keys', keys: number }

/** What updateOrder asks to change: a merge patch of an order, as validated. */
export interface OrderChange {
  status?: OrderStatus | undefined
  /** Only with `status: 'cancelled'` (the route refuses it otherwise). */
  cancellationReason?: string | undefined
  metadata?: MetadataPatch | null | undefined
}

/** The field of an order that holds when it reached each status (placement sets `placedAt`). */
const TIME_OF_STATUS = { approved: 'approvedAt', delivered: 'deliveredAt', cancelled: 'cancelledAt' } as const satisfies Partial<Record<OrderStatus, keyof Order>>

/** An update that a store writes: one that changes the order's status or metadata. A refusal, or setting what the order already has, writes nothing. */
export function writesOrder (outcome: OrderUpdateOutcome): outcome is Extract<OrderUpdateOutcome, { outcome: 'updated' }> {
  return outcome.outcome === 'updated' &&
    (outcome.previous.status !== outcome.order.status || !sameMetadata(outcome.previous.metadata ?? {}, outcome.order.metadata ?? {}))
}

/** Whether a pet with `petStatus` (undefined: no such pet) may be ordered, judged on the pet's locked row. */
export function decidePlacement (petStatus: PetStatus | undefined): { outcome: 'orderable' } | { outcome: 'pet_not_found' } | { outcome: 'pet_not_available', petStatus: PetStatus } {
  if (petStatus === undefined) return { outcome: 'pet_not_found' }
  if (petStatus !== ORDERABLE_PET_STATUS) return { outcome: 'pet_not_available', petStatus }
  return { outcome: 'orderable' }
}

/**
 * The one rule of an order's update, shared by both stores, judged on the order as the store's
 * transaction read it: a missing order first, then `If-Match`, then the transition, the cancellation's
 * reason and the metadata's size. A move sets the time of the new status to `now` and gives the pet the
 * status {@link PET_STATUS_OF_ORDER} names when it differs from the one before.
 */
export function decideOrderUpdate (current: Order | undefined, change: OrderChange, now: Date, precondition?: OrderPrecondition): OrderUpdateOutcome {
  if (current === undefined) return { outcome: 'not_found' }
  if (precondition !== undefined && !precondition(current)) return { outcome: 'precondition_failed' }
  const status = change.status ?? current.status
  if (!isAllowedOrderTransition(current.status, status)) return { outcome: 'invalid_transition', from: current.status, to: status }
  const moved = status !== current.status
  if (change.cancellationReason !== undefined && !moved && change.cancellationReason !== current.cancellationReason) {
    return { outcome: 'cancellation_reason_refused', reason: current.cancellationReason }
  }
  const metadata = mergeMetadata(current.metadata ?? {}, change.metadata)
  const keys = Object.keys(metadata).length
  if (keys > METADATA_MAX_KEYS) return { outcome: 'too_many_metadata_keys', keys }
  const order: Order = { ...current, status, metadata }
  if (moved && status !== 'placed') order[TIME_OF_STATUS[status]] = now.toISOString()
  if (moved && change.cancellationReason !== undefined) order.cancellationReason = change.cancellationReason
  const before = PET_STATUS_OF_ORDER[current.status]
  const after = PET_STATUS_OF_ORDER[status]
  return { outcome: 'updated', order, previous: current, petStatus: before === after ? undefined : after }
}
