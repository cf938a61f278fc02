import type { Database } from '../../../infra/database/database.js'
import type { BusPositionStore } from './bus-position-store.js'
import { PostgresBusPositionStore } from './postgres-bus-position-store.js'
import { SqliteBusPositionStore } from './sqlite-bus-position-store.js'

/** The bus position store of `database`'s engine (neither module loads a driver). */
export function createBusPositionStore (database: Database): BusPositionStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteBusPositionStore(database)
    case 'postgres': return new PostgresBusPositionStore(database)
  }
}
