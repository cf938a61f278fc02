import type { TestContext } from 'node:test'
import type pg from 'pg'
import { withPostgres as withPostgresAt } from '../../tools/harness/postgres.js'
import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import { testDatabaseUrlIn, testStoresIn } from '../../tools/harness/test-stores.js'

export { withSearchPath } from '../../tools/harness/postgres.js'
export { scratchStore, type ScratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
export { execSql } from '../../tools/harness/store-sql.js'

/** The PostgreSQL server the PostgreSQL suites use; unset, they are skipped. */
export const TEST_DATABASE_URL = testDatabaseUrlIn(process.env)

export const POSTGRES_SKIPPED = 'PostgreSQL suites skipped: TEST_DATABASE_URL is not set. ' +
  'To run them: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test'

/**
 * SQLite always; PostgreSQL when TEST_DATABASE_URL is set. `TEST_STORES=sqlite` (or
 * `postgres`) narrows the list.
 */
export function testStores (): StoreKind[] {
  return testStoresIn(process.env)
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
  return withPostgresAt(work, url)
}

const closersOf = new Map<string, Array<() => Promise<void>>>()

/** Has `close` run before the store at `databaseUrl` (one {@link freshDatabaseUrl} made) is dropped, rather than after. */
export function closeBeforeDrop (databaseUrl: string, close: () => Promise<void>): void {
  const closers = closersOf.get(databaseUrl) ?? []
  closers.push(close)
  closersOf.set(databaseUrl, closers)
}

/**
 * A DATABASE_URL for a store no other test touches: a new SQLite file, or a new
 * PostgreSQL schema that is dropped when the test ends.
 */
export async function freshDatabaseUrl (t: TestContext, kind: StoreKind): Promise<string> {
  const store = await scratchStore(kind, 'test', kind === 'postgres' ? testDatabaseUrl() : undefined)
  // cleanups run in the order they were registered, so this one runs before those of the apps built on
  // the store later: it closes them first (their background loops query the store until closed)
  t.after(async () => {
    for (const close of closersOf.get(store.url)?.splice(0) ?? []) await close()
    closersOf.delete(store.url)
    await store.drop()
  })
  return store.url
}

/** Every cell of every table of a store, as text: to prove what is (and is not) stored. */
export async function readAllCells (databaseUrl: string): Promise<Array<{ table: string, column: string, value: string }>> {
  const rows: Array<{ table: string, row: Record<string, unknown> }> = []
  if (databaseUrl.startsWith('sqlite:')) {
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
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

/**
 * Holds a pet's row the way a writer in another process would (SQLite: the database's write lock,
 * `BEGIN IMMEDIATE`; PostgreSQL: the row, `SELECT … FOR UPDATE`) until the returned function is called.
 */
export async function holdPetLocked (databaseUrl: string, petId: number): Promise<() => Promise<void>> {
  if (databaseUrl.startsWith('sqlite:')) {
    // better-sqlite3 as the store loads it (the addon that fits this Node)
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
    const db = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    db.exec('BEGIN IMMEDIATE')
    return async () => {
      db.exec('ROLLBACK')
      db.close()
    }
  }
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  await client.query('BEGIN')
  await client.query('SELECT id FROM pets WHERE id = $1 FOR UPDATE', [petId])
  return async () => {
    await client.query('ROLLBACK')
    await client.end()
  }
}
