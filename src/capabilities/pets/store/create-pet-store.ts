import type { Database } from '../../../infra/database/database.js'
import type { PetStore } from './pet-store.js'
import { PostgresPetStore } from './postgres-pet-store.js'
import { SqlitePetStore } from './sqlite-pet-store.js'

/**
 * The pet store of `database`'s engine. Neither engine's module loads a driver (the database loaded its
 * own), so both are imported as they are: no chunk to fetch at start.
 */
export function createPetStore (database: Database): PetStore {
  switch (database.kind) {
    case 'sqlite': return new SqlitePetStore(database)
    case 'postgres': return new PostgresPetStore(database)
  }
}
