import type { Database } from '../../../infra/database/database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { CategoryStore } from './category-store.js'
import { PostgresCategoryStore } from './postgres-category-store.js'
import { SqliteCategoryStore } from './sqlite-category-store.js'

/** The category store of `database`'s engine (neither module loads a driver), its events' times read from `clock` (the app's). */
export function createCategoryStore (database: Database, clock: Clock): CategoryStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteCategoryStore(database, clock)
    case 'postgres': return new PostgresCategoryStore(database, clock)
  }
}
