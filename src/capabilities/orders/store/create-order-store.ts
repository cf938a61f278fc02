import type { Database } from '../../../infra/database/database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { OrderStore } from './order-store.js'
import { PostgresOrderStore } from './postgres-order-store.js'
import { SqliteOrderStore } from './sqlite-order-store.js'

/** The order store of `database`'s engine (neither module loads a driver), the times of its orders and events read from `clock` (the app's). */
export function createOrderStore (database: Database, clock: Clock): OrderStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteOrderStore(database, clock)
    case 'postgres': return new PostgresOrderStore(database, clock)
  }
}
