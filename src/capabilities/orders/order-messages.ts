import type { Int64 } from '../../infra/json/int64.js'
import type { PetStatus } from '../pets/index.js'
import type { OrderStatus } from './order-schemas.js'
import { ORDER_TRANSITIONS } from './order-transitions.js'

/** The messages of the orders' errors, in one place for the routes and the document's examples. */
export const orderNotFoundMessage = (orderId: Int64): string => `No order has id ${orderId}.`

export const petNotAvailableMessage = (petId: Int64, status: PetStatus): string =>
  `Pet ${petId} is "${status}", not "available", so it cannot be ordered.`

export const orderedPetNotFoundMessage = (petId: Int64): string => `body: field "petId": no pet has id ${petId}.`

export const orderPreconditionFailedMessage = (orderId: Int64): string =>
  `If-Match does not match the current ETag of order ${orderId}: it has changed since that tag was read. Read it again and retry.`

export function orderInvalidTransitionMessage (orderId: Int64, from: OrderStatus, to: OrderStatus): string {
  const next = ORDER_TRANSITIONS[from]
  const why = next.length === 0 ? `"${from}" is final` : `from "${from}" it can only become ${next.map((status) => `"${status}"`).join(' or ')}`
  return `Order ${orderId} is "${from}" and cannot become "${to}": ${why}.`
}

export const cancellationReasonWithoutCancelMessage = (): string =>
  'body: field "cancellationReason" is accepted only with "status": "cancelled" (the move to "cancelled"); nothing changed.'

export function cancellationReasonRefusedMessage (orderId: Int64, reason: string | undefined): string {
  const had = reason === undefined ? 'without a reason' : 'with another reason'
  return `body: field "cancellationReason": order ${orderId} is already "cancelled" (${had}); the reason is given on the move to "cancelled" and not changed afterwards. Nothing changed.`
}

export const tooManyMetadataKeysMessage = (keys: number, max: number): string =>
  `body: field "metadata": after this patch the order would have ${keys} keys, but at most ${max} are allowed; remove keys with null. Nothing changed.`
