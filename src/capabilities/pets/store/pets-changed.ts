/**
 * How the pets' port (pet-moves.ts), having changed pets in another store's transaction (an order moving a
 * pet's status), tells this process's pet store, so that no list page read before is served after it: the
 * pet store of each database registers how it moves its list version.
 */
const moveListVersionOf = new WeakMap<object, () => void>()

/** Called by the pet store of `database`: how its list version moves. */
export function registerPetsChanged (database: object, moveListVersion: () => void): void {
  moveListVersionOf.set(database, moveListVersion)
}

/** Pets of `database` were changed by this process outside the pet store (through the port): its list pages are stale. */
export function notePetsChanged (database: object): void {
  moveListVersionOf.get(database)?.()
}
