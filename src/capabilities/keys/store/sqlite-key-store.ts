import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { BOOTSTRAP_API_KEY_ROLE, DEFAULT_API_KEY_ROLE, type ApiKeyRole } from '../roles.js'
import { API_KEY_COLUMNS, rowToApiKey, type ApiKeyRow } from './key-rows.js'
import type { ApiKeyRecord, KeyStore } from './key-store.js'

const SQL = {
  insertApiKey: `INSERT INTO api_keys (name, key_hash, role, created_at) VALUES (?, ?, ?, ?) RETURNING ${API_KEY_COLUMNS}`,
  findActiveApiKey: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL`,
  listApiKeys: `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY id`,
  revokeApiKey: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  touchApiKey: 'UPDATE api_keys SET last_used_at = ? WHERE id = ?',
  // one statement holds SQLite's write lock from the check to the insert
  insertFirstApiKey: `INSERT INTO api_keys (name, key_hash, role, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${API_KEY_COLUMNS}`
} as const

/** The API keys of the embedded database. */
export class SqliteKeyStore implements KeyStore {
  readonly #database: SqliteDatabase
  readonly #clock: Clock
  readonly #statements: () => PreparedStatements<keyof typeof SQL>

  /** `clock`: the time of a key's creation and revocation (the app's). */
  constructor (database: SqliteDatabase, clock: Clock) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL)
    this.#clock = clock
  }

  #now (): string {
    return new Date(this.#clock.now()).toISOString()
  }

  async createApiKey (name: string, keyHash: string, role: ApiKeyRole = DEFAULT_API_KEY_ROLE): Promise<ApiKeyRecord> {
    return this.#database.run(() => rowToApiKey(this.#statements().insertApiKey.get(name, keyHash, role, this.#now()) as ApiKeyRow))
  }

  async findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.#database.run(() => {
      const row = this.#statements().findActiveApiKey.get(keyHash) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
    })
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return this.#database.run(() => (this.#statements().listApiKeys.all() as ApiKeyRow[]).map(rowToApiKey))
  }

  async revokeApiKey (id: number): Promise<boolean> {
    return this.#database.run(() => this.#statements().revokeApiKey.run(this.#now(), id).changes === 1)
  }

  async touchApiKey (id: number, usedAt: Date): Promise<void> {
    this.#database.run(() => this.#statements().touchApiKey.run(usedAt.toISOString(), id))
  }

  async createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.#database.run(() => {
      const row = this.#statements().insertFirstApiKey.get(name, keyHash, BOOTSTRAP_API_KEY_ROLE, this.#now()) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
    })
  }
}
