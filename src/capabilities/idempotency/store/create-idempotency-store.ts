import type { Database } from '../../../infra/database/database.js'
import type { IdempotencyStore } from './idempotency-store.js'
import { PostgresIdempotencyStore } from './postgres-idempotency-store.js'
import { SqliteIdempotencyStore } from './sqlite-idempotency-store.js'

/**
 * The idempotency store of `database`'s engine. Neither engine's module loads a driver (the database loaded its
 * own), so both are imported as they are: no chunk to fetch at start.
 */
export function createIdempotencyStore (database: Database): IdempotencyStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteIdempotencyStore(database)
    case 'postgres': return new PostgresIdempotencyStore(database)
  }
}
