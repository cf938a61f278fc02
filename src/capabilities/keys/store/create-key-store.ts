import type { Database } from '../../../infra/database/database.js'
import type { KeyStore } from './key-store.js'
import { PostgresKeyStore } from './postgres-key-store.js'
import { SqliteKeyStore } from './sqlite-key-store.js'

/**
 * The key store of `database`'s engine. Neither engine's module loads a driver (the database loaded its
 * own), so both are imported as they are: no chunk to fetch at start.
 */
export function createKeyStore (database: Database): KeyStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteKeyStore(database)
    case 'postgres': return new PostgresKeyStore(database)
  }
}
