import type { Pet, PetPatch, PetStatus } from './pet-schemas.js'
import { isAllowedTransition } from './status-transitions.js'

/**
 * Whether the pet as it is now may be changed: the `If-Match` check. The store calls it inside the
 * transaction that writes, on the row it has locked, so no other change can slip in between.
 */
export type PetPrecondition = (current: Pet) => boolean

/** What a store's updatePet did. */
export type PetUpdateOutcome =
  /** `pet` as it now is and `previous` as it was; equal when the patch changed nothing (then nothing was written). */
  | { outcome: 'updated', pet: Pet, previous: Pet }
  | { outcome: 'not_found' }
  | { outcome: 'precondition_failed' }
  | { outcome: 'invalid_transition', from: PetStatus, to: PetStatus }
  /** The patch changes the status of a pet whose open order (`orderId`) holds it (orders decide it then). */
  | { outcome: 'pet_has_open_order', status: PetStatus, orderId: number }

/**
 * The one rule of an update, shared by both stores, judged on the pet as the store's transaction
 * read it: a missing pet first (a precondition means nothing without one), then `If-Match`, then an open
 * order (`openOrderId` asks the same transaction for its id; asked only when the patch changes the status), then the
 * status transition. Fields the patch leaves out keep their value.
 */
export function decidePetUpdate (current: Pet | undefined, patch: PetPatch, precondition?: PetPrecondition, openOrderId: () => number | undefined = () => undefined): PetUpdateOutcome {
  if (current === undefined) return { outcome: 'not_found' }
  if (precondition !== undefined && !precondition(current)) return { outcome: 'precondition_failed' }
  if (patch.status !== undefined && patch.status !== current.status) {
    const orderId = openOrderId()
    if (orderId !== undefined) return { outcome: 'pet_has_open_order', status: current.status, orderId }
  }
  if (patch.status !== undefined && !isAllowedTransition(current.status, patch.status)) {
    return { outcome: 'invalid_transition', from: current.status, to: patch.status }
  }
  const pet: Pet = {
    id: current.id,
    name: patch.name ?? current.name,
    categoryId: patch.categoryId ?? current.categoryId,
    status: patch.status ?? current.status
  }
  return { outcome: 'updated', pet, previous: current }
}

/** Whether an update changed anything (a store writes only then). */
export function petChanged (previous: Pet, pet: Pet): boolean {
  return previous.name !== pet.name || previous.categoryId !== pet.categoryId || previous.status !== pet.status
}
