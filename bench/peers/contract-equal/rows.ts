/**
 * The contract-equal peer's SQL, on the tables the service's migrations create: SQLite (WAL, `synchronous=FULL`,
 * one IMMEDIATE transaction per create) or PostgreSQL (the pets' schema in the URL's `search_path`).
 */
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'
import { petJson, type Pet, type PetStatus } from './contract.js'

/** A key as `api_keys` holds it. */
export interface StoredKey { id: number, name: string, role: string }
export type Inventory = Record<PetStatus, number>

/** What the routes ask of the store. */
export interface Rows {
  findKey (keyHash: string): Promise<StoredKey | undefined>
  touchKey (id: number, at: Date): Promise<void>
  getPet (id: number | bigint): Promise<Pet | undefined>
  /** Up to `limit` pets after `afterId` in id order, within `status` when given. */
  listPets (status: PetStatus | undefined, afterId: number, limit: number): Promise<Pet[]>
  /** The pet and its `pet.created` event, committed together before it resolves. */
  createPet (pet: Omit<Pet, 'id'>): Promise<Pet>
  inventory (): Promise<Inventory>
  /** The list cursors' secret, created on first use like the service's. */
  cursorSecret (created: string): Promise<string>
  close (): Promise<void>
}

/** True for a store failure a client may retry (a lock held too long, a lost connection): a 503. */
export function isUnavailable (error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return false
  return code.startsWith('SQLITE_BUSY') || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === '57P01' || code.startsWith('08')
}

interface PetRow { id: number | bigint, name: string, category_id: number | bigint | string, status: PetStatus }

function toPet (row: PetRow): Pet {
  const category = BigInt(row.category_id)
  const safe = category >= BigInt(Number.MIN_SAFE_INTEGER) && category <= BigInt(Number.MAX_SAFE_INTEGER)
  return { id: Number(row.id), name: row.name, categoryId: safe ? Number(category) : category, status: row.status }
}

function toInventory (rows: ReadonlyArray<{ status: PetStatus, pets: number | bigint | string }>): Inventory {
  const counts: Inventory = { available: 0, pending: 0, sold: 0 }
  for (const row of rows) counts[row.status] = Number(row.pets)
  return counts
}

const eventData = (pet: Pet): string => `{"pet":${petJson(pet)}}`

/** better-sqlite3 13 needs Node-API 10 (Node 22.14+); Node 20 gets the 12.x line, installed as `better-sqlite3-node20`. */
function sqliteDriver (): typeof BetterSqlite3 {
  const require = createRequire(import.meta.url)
  return (Number(process.versions.napi) >= 10 ? require('better-sqlite3') : require('better-sqlite3-node20')) as typeof BetterSqlite3
}

export function sqliteRows (path: string): Rows {
  const Database = sqliteDriver()
  const db = new Database(path, { fileMustExist: true })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  // int64 category ids beyond 2^53 read exactly
  const pets = (sql: string): BetterSqlite3.Statement => db.prepare(sql).safeIntegers(true)
  const findKey = db.prepare('SELECT id, name, role FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
  const touchKey = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  const getPet = pets('SELECT id, name, category_id, status FROM pets WHERE id = ?')
  const listAll = pets('SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?')
  const listByStatus = pets('SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?')
  const insertPet = pets('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id, name, category_id, status')
  const insertEvent = db.prepare("INSERT INTO events (type, occurred_at, data) VALUES ('pet.created', ?, ?)")
  const counts = db.prepare('SELECT status, pets FROM pet_counts')
  const create = db.transaction((pet: Omit<Pet, 'id'>): Pet => {
    const created = toPet(insertPet.get(pet.name, pet.categoryId, pet.status) as PetRow)
    insertEvent.run(Date.now(), eventData(created))
    return created
  })
  return {
    findKey: async (keyHash) => findKey.get(keyHash) as StoredKey | undefined,
    touchKey: async (id, at) => { touchKey.run(at.toISOString(), id) },
    getPet: async (id) => {
      const row = getPet.get(id) as PetRow | undefined
      return row === undefined ? undefined : toPet(row)
    },
    listPets: async (status, afterId, limit) => ((status === undefined ? listAll.all(afterId, limit) : listByStatus.all(status, afterId, limit)) as PetRow[]).map(toPet),
    createPet: async (pet) => create.immediate(pet),
    inventory: async () => toInventory(counts.all() as Array<{ status: PetStatus, pets: number }>),
    cursorSecret: async (created) => {
      db.prepare("INSERT OR IGNORE INTO settings (name, value) VALUES ('cursor_secret', ?)").run(created)
      return (db.prepare("SELECT value FROM settings WHERE name = 'cursor_secret'").get() as { value: string }).value
    },
    close: async () => { db.close() }
  }
}

// the lock every writer of events takes, so that event ids are committed in id order (the schema's contract)
const CHANGES_LOCK = 'pg_advisory_xact_lock(1347616770, hashtext(current_schema()))'

export async function postgresRows (url: string): Promise<Rows> {
  const { default: driver } = await import('pg')
  const int8 = (text: string): number | bigint => Number.isSafeInteger(Number(text)) ? Number(text) : BigInt(text)
  // int8 exact: a number when a double holds it, else a bigint
  const types = { getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === 20 ? int8 : driver.types.getTypeParser(oid, format) as unknown) as pg.CustomTypesConfig['getTypeParser'] }
  const pool = new driver.Pool({ connectionString: url, types })
  const query = async <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[] = []): Promise<R[]> => (await pool.query<R>({ name, text, values })).rows
  const param = (value: number | bigint): string | number => typeof value === 'bigint' ? value.toString() : value
  return {
    findKey: async (keyHash) => (await query<StoredKey>('peer-find-key', 'SELECT id, name, role FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]))[0],
    touchKey: async (id, at) => { await query('peer-touch-key', 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]) },
    getPet: async (id) => {
      const [row] = await query<PetRow>('peer-get-pet', 'SELECT id, name, category_id, status FROM pets WHERE id = $1', [param(id)])
      return row === undefined ? undefined : toPet(row)
    },
    listPets: async (status, afterId, limit) => (status === undefined
      ? await query<PetRow>('peer-list', 'SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2', [afterId, limit])
      : await query<PetRow>('peer-list-status', 'SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3', [status, afterId, limit])).map(toPet),
    createPet: async (pet) => {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const { rows } = await client.query<PetRow>({
          name: 'peer-insert-pet',
          text: `WITH ordered AS (SELECT ${CHANGES_LOCK}) INSERT INTO pets (name, category_id, status) SELECT $1, $2, $3 FROM ordered RETURNING id, name, category_id, status`,
          values: [pet.name, param(pet.categoryId), pet.status]
        })
        const created = toPet(rows[0] as PetRow)
        await client.query({ name: 'peer-insert-event', text: "INSERT INTO events (type, occurred_at, data) VALUES ('pet.created', $1, $2)", values: [new Date(), eventData(created)] })
        await client.query('COMMIT')
        return created
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    inventory: async () => toInventory(await query<{ status: PetStatus, pets: number }>('peer-counts', 'SELECT status, pets FROM pet_counts')),
    cursorSecret: async (created) => {
      await pool.query("INSERT INTO settings (name, value) VALUES ('cursor_secret', $1) ON CONFLICT (name) DO NOTHING", [created])
      return (await pool.query<{ value: string }>("SELECT value FROM settings WHERE name = 'cursor_secret'")).rows[0]?.value ?? created
    },
    close: async () => { await pool.end() }
  }
}
