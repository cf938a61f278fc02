import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import pg from 'pg'

/** The stores the suites run against. */
export type StoreKind = 'sqlite' | 'postgres'

/** The PostgreSQL server the PostgreSQL suites use; unset, they are skipped. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() === '' ? undefined : process.env.TEST_DATABASE_URL?.trim()

export const POSTGRES_SKIPPED = 'PostgreSQL suites skipped: TEST_DATABASE_URL is not set. ' +
  'To run them: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test'

/**
 * SQLite always; PostgreSQL when TEST_DATABASE_URL is set. `TEST_STORES=sqlite` (or
 * `postgres`) narrows the list.
 */
export function testStores (): StoreKind[] {
  const all: StoreKind[] = TEST_DATABASE_URL === undefined ? ['sqlite'] : ['sqlite', 'postgres']
  const wanted = process.env.TEST_STORES?.split(',').map((s) => s.trim()).filter((s) => s !== '')
  return wanted === undefined || wanted.length === 0 ? all : all.filter((kind) => wanted.includes(kind))
}

/** Options for `test`/`describe` that skip a PostgreSQL-only suite, saying why, without a server. */
export function requiresPostgres (): { skip: string | false } {
  return { skip: TEST_DATABASE_URL === undefined ? POSTGRES_SKIPPED : false }
}

/** The test server's URL; throws in a suite that forgot {@link requiresPostgres}. */
export function testDatabaseUrl (): string {
  if (TEST_DATABASE_URL === undefined) throw new Error(POSTGRES_SKIPPED)
  return TEST_DATABASE_URL
}

/** Runs `work` on a fresh connection to `url` (the test server by default), then closes it. */
export async function withPostgres<T> (work: (client: pg.Client) => Promise<T>, url = testDatabaseUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** `url` with its search_path set to `schema`, the way an operator would select one. */
export function withSearchPath (url: string, schema: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('options', `-c search_path=${schema}`)
  return parsed.toString()
}

/** A store nothing else uses, and how to remove it. */
export interface ScratchStore {
  /** Its DATABASE_URL. */
  url: string
  drop: () => Promise<void>
}

/**
 * A new SQLite file in a new temporary directory, or a new schema `petstore_<purpose>_<hex>` on
 * the PostgreSQL server `serverUrl`: for tests, and for the fuzz, soak and bench runners.
 */
export async function scratchStore (kind: StoreKind, purpose: string, serverUrl?: string): Promise<ScratchStore> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), `petstore-${purpose}-`))
    return { url: `sqlite:${join(dir, 'petstore.db')}`, drop: () => rm(dir, { recursive: true, force: true }) }
  }
  if (serverUrl === undefined) throw new Error(`a PostgreSQL ${purpose} store needs a server URL`)
  const schema = `petstore_${purpose}_${randomBytes(6).toString('hex')}`
  await withPostgres((client) => client.query(`CREATE SCHEMA ${schema}`), serverUrl)
  return {
    url: withSearchPath(serverUrl, schema),
    drop: async () => { await withPostgres((client) => client.query(`DROP SCHEMA ${schema} CASCADE`), serverUrl) }
  }
}

/**
 * A DATABASE_URL for a store no other test touches: a new SQLite file, or a new
 * PostgreSQL schema that is dropped when the test ends.
 */
export async function freshDatabaseUrl (t: TestContext, kind: StoreKind): Promise<string> {
  const store = await scratchStore(kind, 'test', kind === 'postgres' ? testDatabaseUrl() : undefined)
  t.after(store.drop)
  return store.url
}

/** Every cell of every table of a store, as text: to prove what is (and is not) stored. */
export async function readAllCells (databaseUrl: string): Promise<Array<{ table: string, column: string, value: string }>> {
  const rows: Array<{ table: string, row: Record<string, unknown> }> = []
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true })
    try {
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((row) => row.name)
      for (const table of tables) {
        for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Array<Record<string, unknown>>) rows.push({ table, row })
      }
    } finally {
      db.close()
    }
  } else {
    await withPostgres(async (client) => {
      const tables = (await client.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")).rows
      for (const { name } of tables) {
        for (const row of (await client.query(`SELECT * FROM "${name}"`)).rows as Array<Record<string, unknown>>) rows.push({ table: name, row })
      }
    }, databaseUrl)
  }
  return rows.flatMap(({ table, row }) => Object.entries(row).map(([column, value]) => ({ table, column, value: String(value) })))
}

/** Runs one SQL statement on the store `databaseUrl` names (SQLite file or PostgreSQL schema). */
export async function execSql (databaseUrl: string, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    try {
      // PostgreSQL's $1, $2… placeholders, so that one statement serves both engines
      const statement = db.prepare(sql.replace(/\$\d+/g, '?'))
      return statement.reader ? statement.all(...params) as Array<Record<string, unknown>> : (statement.run(...params), [])
    } finally {
      db.close()
    }
  }
  return withPostgres(async (client) => (await client.query(sql, params)).rows as Array<Record<string, unknown>>, databaseUrl)
}

/**
 * Holds a pet's row the way a writer in another process would (SQLite: the database's write lock,
 * `BEGIN IMMEDIATE`; PostgreSQL: the row, `SELECT … FOR UPDATE`) until the returned function is called.
 */
export async function holdPetLocked (databaseUrl: string, petId: number): Promise<() => Promise<void>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    db.exec('BEGIN IMMEDIATE')
    return async () => {
      db.exec('ROLLBACK')
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  await client.query('BEGIN')
  await client.query('SELECT id FROM pets WHERE id = $1 FOR UPDATE', [petId])
  return async () => {
    await client.query('ROLLBACK')
    await client.end()
  }
}
