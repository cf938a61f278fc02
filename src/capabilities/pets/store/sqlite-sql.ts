import type Database from 'better-sqlite3'
import { API_KEY_COLUMNS } from './rows.js'

// better-sqlite3 reads an INTEGER beyond 2^53 as a rounded number; reading every integer as a bigint
// (safeIntegers) would cost every ordinary row. So category_id comes back as a number when a double holds
// it exactly, else as its decimal text (rowToPet makes it a bigint). Ids are assigned below 2^53
const EXACT_CATEGORY_ID = `CASE WHEN category_id BETWEEN ${Number.MIN_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} ` +
  'THEN category_id ELSE CAST(category_id AS TEXT) END AS category_id'
/** The pets columns every query returns, in the order of PetRow (rows.ts), the category id exactly. */
const PET_COLUMNS = `id, name, ${EXACT_CATEGORY_ID}, status`

// an idempotency_keys row in the shape decideClaim reads (times are stored as ms already)
const IDEMPOTENCY_ROW_COLUMNS = 'fingerprint, token, locked_until AS lockedUntilMs, response_status AS responseStatus, ' +
  'response_body AS responseBody, expires_at AS expiresAtMs'

/** The statements of the SQLite store, as text. */
export const SQL = {
  insertPet: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
  findPet: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`,
  updatePet: 'UPDATE pets SET name = ?, category_id = ?, status = ? WHERE id = ?',
  // in the transaction of the change it records (the change feed's outbox)
  insertEvent: 'INSERT INTO events (type, occurred_at, data) VALUES (?, ?, ?)',
  listPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  listPetsByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
  insertApiKey: `INSERT INTO api_keys (name, key_hash, role, created_at) VALUES (?, ?, ?, ?) RETURNING ${API_KEY_COLUMNS}`,
  findActiveApiKey: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL`,
  listApiKeys: `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY id`,
  revokeApiKey: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  touchApiKey: 'UPDATE api_keys SET last_used_at = ? WHERE id = ?',
  // one statement holds SQLite's write lock from the check to the insert
  insertFirstApiKey: `INSERT INTO api_keys (name, key_hash, role, created_at) SELECT ?, ?, 'write', ? WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${API_KEY_COLUMNS}`,
  insertSetting: 'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
  findSetting: 'SELECT value FROM settings WHERE name = ?',
  findIdempotencyKey: `SELECT ${IDEMPOTENCY_ROW_COLUMNS} FROM idempotency_keys WHERE scope = ? AND key = ?`,
  insertIdempotencyKey: 'INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES (?, ?, ?, ?, ?, ?)',
  takeOverIdempotencyKey: 'UPDATE idempotency_keys SET fingerprint = ?, token = ?, locked_until = ?, expires_at = ?, response_status = NULL, response_body = NULL WHERE scope = ? AND key = ?',
  completeIdempotencyKey: 'UPDATE idempotency_keys SET token = NULL, locked_until = NULL, response_status = ?, response_body = ? WHERE scope = ? AND key = ? AND token = ?',
  releaseIdempotencyKey: 'DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND token = ?',
  deleteExpiredIdempotencyKeys: 'DELETE FROM idempotency_keys WHERE expires_at <= ?',
  ping: 'SELECT 1',
  dataVersion: 'PRAGMA data_version'
} as const

/** Every statement of {@link SQL}, prepared once on `db` (which must be migrated: preparing needs the tables). */
export type SqliteStatements = { readonly [name in keyof typeof SQL]: Database.Statement }

export function prepareStatements (db: Database.Database): SqliteStatements {
  return prepareAll(db, SQL, ['dataVersion'])
}

/** Each statement of `texts` prepared on `db`; those named in `plucked` return their first column alone. */
export function prepareAll<K extends string> (db: Database.Database, texts: Readonly<Record<K, string>>, plucked: ReadonlyArray<NoInfer<K>> = []): { readonly [name in K]: Database.Statement } {
  const statements = Object.fromEntries(Object.entries<string>(texts).map(([name, text]) => [name, db.prepare(text)])) as Record<K, Database.Statement>
  for (const name of plucked) statements[name].pluck()
  return statements
}
