import type { Database } from '../../../infra/database/database.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { exactInt64Column } from '../../../infra/database/sqlite/exact-int64.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import { toInt64, type Int64 } from '../../../infra/json/int64.js'
import { PET_STATUSES, type PetStatus } from '../pet-schemas.js'
import type { PetCounts } from './pet-counts.js'

/**
 * The pets by category, as another capability asks for them (categories show each category's pets): the category
 * ids the pets carry, and their counts by status. Read from `pet_category_counts`, which the database's triggers keep
 * in the transaction of every change of pets (migrations 0016), so neither ever counts pets.
 */
export interface PetCategoryCounts {
  /** The category ids at least one pet carries, ascending, from `from` on (inclusive; any int64), at most `limit`. */
  listPetCategoryIds (from: Int64, limit: number): Promise<Int64[]>
  /** The pets of each of these categories by status, by the category id as text; a category no pet carries is absent. */
  countPetsByCategory (categoryIds: readonly Int64[]): Promise<Map<string, PetCounts>>
}

interface CountRow { category_id: Int64 | string, status: PetStatus, pets: number | bigint | string }

const EXACT_CATEGORY_ID = exactInt64Column('category_id')

const int64Of = (value: Int64 | string): Int64 => typeof value === 'string' ? toInt64(BigInt(value)) : value

function countsByCategory (rows: readonly CountRow[]): Map<string, PetCounts> {
  const counts = new Map<string, PetCounts>()
  for (const row of rows) {
    const key = String(int64Of(row.category_id))
    let category = counts.get(key)
    if (category === undefined) {
      category = Object.fromEntries(PET_STATUSES.map((status) => [status, 0])) as PetCounts
      counts.set(key, category)
    }
    category[row.status] = Number(row.pets)
  }
  return counts
}

const SQLITE_SQL = {
  listIds: `SELECT ${EXACT_CATEGORY_ID} FROM pet_category_counts WHERE category_id >= ? AND pets > 0 GROUP BY category_id ORDER BY category_id LIMIT ?`,
  counts: `SELECT ${EXACT_CATEGORY_ID}, status, pets FROM pet_category_counts WHERE category_id IN (SELECT value FROM json_each(?)) AND pets > 0`
} as const

const POSTGRES_SQL = {
  listIds: {
    name: 'petstore-list-pet-category-ids',
    text: 'SELECT category_id FROM pet_category_counts WHERE category_id >= $1 AND pets > 0 GROUP BY category_id ORDER BY category_id LIMIT $2'
  },
  counts: {
    name: 'petstore-count-pets-by-category',
    text: 'SELECT category_id, status, pets FROM pet_category_counts WHERE category_id = ANY ($1::bigint[]) AND pets > 0'
  }
} as const

class SqlitePetCategoryCounts implements PetCategoryCounts {
  readonly #database: SqliteDatabase
  // prepared on first use, because preparing needs the tables that migrating creates
  readonly #statements: () => PreparedStatements<keyof typeof SQLITE_SQL>

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQLITE_SQL)
  }

  async listPetCategoryIds (from: Int64, limit: number): Promise<Int64[]> {
    return this.#database.run(() => (this.#statements().listIds.all(from, limit) as CountRow[]).map((row) => int64Of(row.category_id)))
  }

  async countPetsByCategory (categoryIds: readonly Int64[]): Promise<Map<string, PetCounts>> {
    if (categoryIds.length === 0) return new Map()
    return this.#database.run(() => countsByCategory(this.#statements().counts.all(stringifyJson(categoryIds)) as CountRow[]))
  }
}

class PostgresPetCategoryCounts implements PetCategoryCounts {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async listPetCategoryIds (from: Int64, limit: number): Promise<Int64[]> {
    const rows = await this.#database.query<CountRow>(POSTGRES_SQL.listIds, [String(from), limit])
    return rows.map((row) => int64Of(row.category_id))
  }

  async countPetsByCategory (categoryIds: readonly Int64[]): Promise<Map<string, PetCounts>> {
    if (categoryIds.length === 0) return new Map()
    return countsByCategory(await this.#database.query<CountRow>(POSTGRES_SQL.counts, [categoryIds.map(String)]))
  }
}

/** The pets' counts by category on `database`'s engine. */
export function createPetCategoryCounts (database: Database): PetCategoryCounts {
  switch (database.kind) {
    case 'sqlite': return new SqlitePetCategoryCounts(database)
    case 'postgres': return new PostgresPetCategoryCounts(database)
  }
}
