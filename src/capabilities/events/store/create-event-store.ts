import type { Database } from '../../../infra/database/database.js'
import type { EventStore } from './event-store.js'
import { PostgresEventStore } from './postgres-event-store.js'
import { SqliteEventStore } from './sqlite-event-store.js'

/**
 * The event store of `database`'s engine. Neither engine's module loads a driver (the database loaded its
 * own), so both are imported as they are: no chunk to fetch at start.
 */
export function createEventStore (database: Database): EventStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteEventStore(database)
    case 'postgres': return new PostgresEventStore(database)
  }
}
