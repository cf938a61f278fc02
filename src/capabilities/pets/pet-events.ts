import type { PetChanges } from './pet-event-schemas.js'
import type { Pet } from './pet-schemas.js'

/**
 * The `data` of a `pet.created` event: the one place it is shaped. Generic so that PostgreSQL's group commit, which
 * records the events in the statement that draws the pets' ids, builds its SQL from it (given the pets' columns).
 */
export function petCreatedData<P = Pet> (pet: P): { pet: P } {
  return { pet }
}

/** The `data` of a `pet.updated` event: the pet after the change, and the changed fields as they were before it. */
export function petUpdatedData (previous: Pet, pet: Pet): { pet: Pet, previous: PetChanges } {
  const changes: PetChanges = {}
  if (previous.name !== pet.name) changes.name = previous.name
  if (previous.categoryId !== pet.categoryId) changes.categoryId = previous.categoryId
  if (previous.status !== pet.status) changes.status = previous.status
  return { pet, previous: changes }
}
