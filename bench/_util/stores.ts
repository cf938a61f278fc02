import { Database } from '../../src/infra/database/sqlite/driver.js'
import { CursorCodec } from '../../src/capabilities/pets/cursor.js'
import { withPostgres } from '../../tools/harness/postgres.js'
import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import { execSql } from '../../tools/harness/store-sql.js'
import { within } from '../../tools/harness/within.js'
import { log } from './plan.js'

/** A seeded store of the run. */
export interface BenchStore {
  kind: StoreKind
  url: string
  pets: number
  drop: () => Promise<void>
}

/** What the scenarios need to know of a store to build their requests. */
export interface StoreFacts {
  minId: number
  maxId: number
  /** The id 40 available pets before the end: a deep page after it is full and has a next one. */
  deepAfterId: number
  /** The service's cursor for that position, signed with the store's own secret (as paging there would issue it). */
  deepServiceCursor: string
}

/** The PostgreSQL server to make schemas on: TEST_DATABASE_URL, else a postgres:// DATABASE_URL, else the local one. */
export function postgresServerUrl (): string {
  const candidates = [process.env.TEST_DATABASE_URL, process.env.DATABASE_URL].map((value) => value?.trim())
  return candidates.find((value) => value !== undefined && /^postgres(ql)?:\/\//.test(value)) ?? 'postgres://postgres@127.0.0.1:5432/test'
}

/** Why PostgreSQL cannot be used; undefined when it answers. */
export async function postgresProblem (serverUrl: string): Promise<string | undefined> {
  try {
    await within(8_000, 'no answer', withPostgres((client) => client.query('SELECT 1'), serverUrl))
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

// half available, a fifth pending, three tenths sold, interleaved
const statusSql = (x: string): string => `CASE WHEN ${x} % 10 < 5 THEN 'available' WHEN ${x} % 10 < 7 THEN 'pending' ELSE 'sold' END`

/**
 * A fresh store, migrated by `migrate` (which starts the service on it once), then given `pets`
 * pets directly in one transaction: through HTTP, 1,000,000 creates would take hours.
 */
export async function seededStore (kind: StoreKind, pets: number, pgServerUrl: string, migrate: (url: string) => Promise<void>): Promise<BenchStore> {
  const scratch = await scratchStore(kind, 'bench', pgServerUrl)
  try {
    await migrate(scratch.url)
    const started = performance.now()
    if (kind === 'sqlite') {
      const db = new Database(scratch.url.slice('sqlite:'.length), { fileMustExist: true })
      try {
        db.transaction(() => {
          db.prepare(`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
            INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || x, 1 + x % 5, ${statusSql('x')} FROM seq`).run(pets)
        })()
        db.pragma('wal_checkpoint(TRUNCATE)')
      } finally {
        db.close()
      }
    } else {
      await withPostgres(async (client) => {
        await client.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || x, 1 + x % 5, ${statusSql('x')} FROM generate_series(1, $1::int) AS x`, [pets])
        // what autovacuum would do within a minute anyway, done now so that it does not run during a measurement
        await client.query('VACUUM ANALYZE pets')
      }, scratch.url)
    }
    log(`${kind}: seeded ${pets.toLocaleString('en-US')} pets in ${Math.round(performance.now() - started)} ms`)
    return { kind, url: scratch.url, pets, drop: scratch.drop }
  } catch (error) {
    await scratch.drop()
    throw error
  }
}

/** Ids to read and the deep page's position, read from the store. */
export async function storeFacts (store: BenchStore): Promise<StoreFacts> {
  const [range] = await execSql(store.url, 'SELECT min(id) AS min_id, max(id) AS max_id FROM pets')
  const [deep] = await execSql(store.url, "SELECT id FROM pets WHERE status = 'available' ORDER BY id DESC LIMIT 1 OFFSET 40")
  const [secret] = await execSql(store.url, "SELECT value FROM settings WHERE name = 'cursor_secret'")
  if (range === undefined || deep === undefined || secret === undefined) throw new Error(`${store.kind}: the seeded store has no pets or no cursor secret`)
  const deepAfterId = Number(deep.id)
  return {
    minId: Number(range.min_id),
    maxId: Number(range.max_id),
    deepAfterId,
    deepServiceCursor: new CursorCodec(String(secret.value)).encode({ afterId: deepAfterId, status: 'available' })
  }
}
