import { Database } from '../../src/infra/database/sqlite/driver.js'
import { PETS_LIST } from '../../src/capabilities/pets/list-query.js'
import { PagedList } from '../../src/infra/http/paged-list.js'
import { withPostgres } from '../../tools/harness/postgres.js'
import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import { execSql } from '../../tools/harness/store-sql.js'
import { within } from '../../tools/harness/within.js'
import { log } from './plan.js'
import type { Role } from './servers.js'

/** The servers that write to the store: each orders pets of a block of its own. */
export type StoreServer = Exclude<Role, 'bare'>

/** An inclusive range of pet ids. */
export type IdRange = readonly [number, number]

/** Blocks of available pets for placeOrder, `petsEach` for each of `servers`, seeded after the store's pets. */
export interface OrderablePets {
  servers: readonly StoreServer[]
  petsEach: number
}

/** A seeded store of the run. */
export interface BenchStore {
  kind: StoreKind
  url: string
  pets: number
  /** The ids of the `pets` seeded pets (the orderable blocks come after them). */
  seededIds: IdRange
  /** Each server's block of available pets to order, one pet per placeOrder. */
  orderable: Partial<Record<StoreServer, IdRange>>
  drop: () => Promise<void>
}

/** What the scenarios need to know of a store to build their requests. */
export interface StoreFacts {
  /** The seeded pets' ids (not the orderable blocks'). */
  minId: number
  maxId: number
  /** Each server's block of available pets to order. */
  orderable: Partial<Record<StoreServer, IdRange>>
  /** The id 40 available pets before the end of the seeded pets: a deep page after it is full and has a next one. */
  deepAfterId: number
  /** The service's cursor for that position, signed with the store's own secret (as paging there would issue it). */
  deepServiceCursor: string
  /** The ids of the orders placed before updateOrder's load (bench/scenarios/update-order.ts), on the server it loads. */
  ordersToUpdate?: IdRange
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

const insertPetsSql = (kind: StoreKind, name: string, status: string): string => kind === 'sqlite'
  ? `WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
    INSERT INTO pets (name, category_id, status) SELECT '${name} ' || x, 1 + x % 5, ${status} FROM seq`
  : `INSERT INTO pets (name, category_id, status) SELECT '${name} ' || x, 1 + x % 5, ${status} FROM generate_series(1, $1::int) AS x`

/** The ids a statement that inserted `count` pets after `afterId` gave them: one block, or it throws. */
function insertedRange (row: Record<string, unknown> | undefined, afterId: number, count: number): IdRange {
  const first = Number(row?.first)
  const last = Number(row?.last)
  if (Number(row?.count) !== count || last - first + 1 !== count) throw new Error(`${count} pets inserted after id ${afterId} did not get one block of ids (${first}..${last})`)
  return [first, last]
}

const idsAfterSql = (kind: StoreKind): string => `SELECT min(id) AS first, max(id) AS last, count(*) AS count FROM pets WHERE id > ${kind === 'sqlite' ? '?' : '$1'}`

/**
 * A fresh store, migrated by `migrate` (which starts the service on it once), then given `pets`
 * pets directly in one transaction (through HTTP, 1,000,000 creates would take hours), and after them
 * the `orderable` blocks of available pets, one per server.
 */
export async function seededStore (kind: StoreKind, pets: number, pgServerUrl: string, migrate: (url: string) => Promise<void>,
  orderable: OrderablePets = { servers: [], petsEach: 0 }): Promise<BenchStore> {
  const scratch = await scratchStore(kind, 'bench', pgServerUrl)
  try {
    await migrate(scratch.url)
    const started = performance.now()
    const blocks: Array<{ server: StoreServer | undefined, count: number, name: string, status: string }> = [
      { server: undefined, count: pets, name: 'Pet', status: statusSql('x') },
      ...orderable.servers.map((server) => ({ server, count: orderable.petsEach, name: `Orderable by ${server}`, status: "'available'" }))
    ]
    const ranges: IdRange[] = []
    if (kind === 'sqlite') {
      const db = new Database(scratch.url.slice('sqlite:'.length), { fileMustExist: true })
      try {
        db.transaction(() => {
          for (const block of blocks) {
            const afterId = Number((db.prepare('SELECT coalesce(max(id), 0) AS id FROM pets').get() as { id: number }).id)
            db.prepare(insertPetsSql(kind, block.name, block.status)).run(block.count)
            ranges.push(insertedRange(db.prepare(idsAfterSql(kind)).get(afterId) as Record<string, unknown>, afterId, block.count))
          }
        })()
        db.pragma('wal_checkpoint(TRUNCATE)')
      } finally {
        db.close()
      }
    } else {
      await withPostgres(async (client) => {
        for (const block of blocks) {
          const afterId = Number((await client.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM pets')).rows[0]?.id)
          await client.query(insertPetsSql(kind, block.name, block.status), [block.count])
          ranges.push(insertedRange((await client.query(idsAfterSql(kind), [afterId])).rows[0] as Record<string, unknown>, afterId, block.count))
        }
        // what autovacuum would do within a minute anyway, done now so that it does not run during a measurement
        await client.query('VACUUM ANALYZE pets')
      }, scratch.url)
    }
    const orderableNote = orderable.servers.length === 0 ? '' : ` and ${orderable.servers.length} × ${orderable.petsEach.toLocaleString('en-US')} available pets to order`
    log(`${kind}: seeded ${pets.toLocaleString('en-US')} pets${orderableNote} in ${Math.round(performance.now() - started)} ms`)
    const [seededIds, ...orderableIds] = ranges as [IdRange, ...IdRange[]]
    return {
      kind,
      url: scratch.url,
      pets,
      seededIds,
      orderable: Object.fromEntries(orderable.servers.map((server, i) => [server, orderableIds[i]])),
      drop: scratch.drop
    }
  } catch (error) {
    await scratch.drop()
    throw error
  }
}

/** Ids to read and to order, and the deep page's position, read from the store. */
export async function storeFacts (store: BenchStore): Promise<StoreFacts> {
  const [firstId, lastId] = store.seededIds
  const [deep] = await execSql(store.url, "SELECT id FROM pets WHERE status = 'available' AND id <= $1 ORDER BY id DESC LIMIT 1 OFFSET 40", [lastId])
  const [secret] = await execSql(store.url, 'SELECT value FROM settings WHERE name = $1', [PETS_LIST.secretSetting])
  if (deep === undefined || secret === undefined) throw new Error(`${store.kind}: the seeded store has too few pets or no cursor secret`)
  const deepAfterId = Number(deep.id)
  return {
    minId: firstId,
    maxId: lastId,
    orderable: store.orderable,
    deepAfterId,
    deepServiceCursor: new PagedList(PETS_LIST, String(secret.value)).cursor(deepAfterId, { status: 'available' })
  }
}
