import type { Database } from '../../../infra/database/database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { PetStore } from './pet-store.js'
import { PostgresPetStore } from './postgres-pet-store.js'
import { SqlitePetStore } from './sqlite-pet-store.js'

/**
 * The pet store of `database`'s engine, its events' times read from `clock` (the app's). Neither engine's module
 * loads a driver (the database loaded its own), so both are imported as they are: no chunk to fetch at start.
 */
export function createPetStore (database: Database, clock: Clock): PetStore {
  switch (database.kind) {
    case 'sqlite': return new SqlitePetStore(database, clock)
    case 'postgres': return new PostgresPetStore(database, clock)
  }
}
