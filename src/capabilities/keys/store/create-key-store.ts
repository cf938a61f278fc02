import type { Database } from '../../../infra/database/database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { KeyStore } from './key-store.js'
import { PostgresKeyStore } from './postgres-key-store.js'
import { SqliteKeyStore } from './sqlite-key-store.js'

/**
 * The key store of `database`'s engine, the times of its keys' creation and revocation read from `clock` (the
 * app's). Neither engine's module loads a driver (the database loaded its own), so both are imported as they are:
 * no chunk to fetch at start.
 */
export function createKeyStore (database: Database, clock: Clock): KeyStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteKeyStore(database, clock)
    case 'postgres': return new PostgresKeyStore(database, clock)
  }
}
