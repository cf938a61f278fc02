import { LOCKS, lockSql } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { BOOTSTRAP_API_KEY_ROLE, DEFAULT_API_KEY_ROLE, type ApiKeyRole } from '../roles.js'
import { API_KEY_COLUMNS, rowToApiKey, type ApiKeyRow } from './key-rows.js'
import type { ApiKeyRecord, KeyStore } from './key-store.js'

const SQL = {
  findActiveApiKey: {
    name: 'petstore-find-active-api-key',
    text: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`
  },
  insertApiKey: { text: `INSERT INTO api_keys (name, key_hash, role, created_at) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY_COLUMNS}` },
  // after the firstApiKey lock: instances starting together queue there, and each then sees the others' committed keys
  insertFirstApiKey: {
    text: `INSERT INTO api_keys (name, key_hash, role, created_at) SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${API_KEY_COLUMNS}`
  },
  listApiKeys: { text: `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY id` },
  revokeApiKey: { text: 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id' },
  touchApiKey: { name: 'petstore-touch-api-key', text: 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2' }
} as const

/** The API keys of the shared PostgreSQL database. */
export class PostgresKeyStore implements KeyStore {
  readonly #database: PostgresDatabase
  readonly #clock: Clock

  /** `clock`: the time of a key's creation and revocation (the app's). */
  constructor (database: PostgresDatabase, clock: Clock) {
    this.#database = database
    this.#clock = clock
  }

  async createApiKey (name: string, keyHash: string, role: ApiKeyRole = DEFAULT_API_KEY_ROLE): Promise<ApiKeyRecord> {
    const rows = await this.#database.query<ApiKeyRow>(SQL.insertApiKey, [name, keyHash, role, new Date(this.#clock.now())])
    if (rows[0] === undefined) throw new Error('the insert returned no row')
    return rowToApiKey(rows[0])
  }

  async createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    return await this.#database.transaction(async (client) => {
      // instances starting together queue here; each then sees the others' committed keys
      await client.query(`SELECT ${lockSql(LOCKS.firstApiKey)}`)
      const result = await client.query<ApiKeyRow>({ ...SQL.insertFirstApiKey, values: [name, keyHash, BOOTSTRAP_API_KEY_ROLE, new Date(this.#clock.now())] })
      return result.rows[0] === undefined ? undefined : rowToApiKey(result.rows[0])
    })
  }

  async findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#database.query<ApiKeyRow>(SQL.findActiveApiKey, [keyHash])
    return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return (await this.#database.query<ApiKeyRow>(SQL.listApiKeys, [])).map(rowToApiKey)
  }

  async revokeApiKey (id: number): Promise<boolean> {
    return (await this.#database.query<{ id: number }>(SQL.revokeApiKey, [new Date(this.#clock.now()), id])).length === 1
  }

  async touchApiKey (id: number, usedAt: Date): Promise<void> {
    await this.#database.query(SQL.touchApiKey, [usedAt, id])
  }
}
