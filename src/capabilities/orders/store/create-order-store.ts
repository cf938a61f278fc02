import type { Database } from '../../../infra/database/database.js'
import type { OrderStore } from './order-store.js'
import { PostgresOrderStore } from './postgres-order-store.js'
import { SqliteOrderStore } from './sqlite-order-store.js'

/** The order store of `database`'s engine (neither module loads a driver). */
export function createOrderStore (database: Database): OrderStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteOrderStore(database)
    case 'postgres': return new PostgresOrderStore(database)
  }
}
