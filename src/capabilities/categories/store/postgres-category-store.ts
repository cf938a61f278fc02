import type pg from 'pg'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { recordPostgresEvents } from '../../../infra/database/postgres/postgres-outbox.js'
import { hasSqlState } from '../../../infra/database/postgres/sql-state.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { categoryUpdatedData, type CategoryRecord } from '../category-event-schemas.js'
import { rowToCategory, type CategoryRow, type CategoryStore, type PutCategoryOutcome } from './category-store.js'

const SQL = {
  find: { name: 'petstore-find-category', text: 'SELECT id, name FROM categories WHERE id = $1' },
  findForUpdate: { name: 'petstore-find-category-for-update', text: 'SELECT id, name FROM categories WHERE id = $1 FOR UPDATE' },
  findByName: { name: 'petstore-find-category-by-name', text: 'SELECT id, name FROM categories WHERE name = $1' },
  list: { name: 'petstore-list-categories', text: 'SELECT id, name FROM categories WHERE id >= $1 ORDER BY id LIMIT $2' },
  // a category named at once by another transaction: no row, and the put reads it again, locked
  insert: { name: 'petstore-insert-category', text: 'INSERT INTO categories (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id' },
  rename: { name: 'petstore-rename-category', text: 'UPDATE categories SET name = $1 WHERE id = $2' }
} as const

// unique_violation: the name was given to another category by a transaction that committed after the check
const UNIQUE_VIOLATION = '23505'

/** The categories of the shared PostgreSQL database: a name given in one transaction with its event, its row locked. */
export class PostgresCategoryStore implements CategoryStore {
  readonly #database: PostgresDatabase
  readonly #clock: Clock

  constructor (database: PostgresDatabase, clock: Clock) {
    this.#database = database
    this.#clock = clock
  }

  async findCategory (id: Int64): Promise<CategoryRecord | undefined> {
    const [row] = await this.#database.query<CategoryRow>(SQL.find, [String(id)])
    return row === undefined ? undefined : rowToCategory(row)
  }

  async listCategories (from: Int64, limit: number): Promise<CategoryRecord[]> {
    return (await this.#database.query<CategoryRow>(SQL.list, [String(from), limit])).map(rowToCategory)
  }

  async putCategory (id: Int64, name: string): Promise<PutCategoryOutcome> {
    try {
      return await this.#database.transaction(async (client) => await this.#put(client, id, name))
    } catch (error) {
      if (!hasSqlState(error, UNIQUE_VIOLATION)) throw error
      // judged again: the check now sees the other category's name
      return await this.#database.transaction(async (client) => await this.#put(client, id, name))
    }
  }

  async #put (client: pg.PoolClient, id: Int64, name: string): Promise<PutCategoryOutcome> {
    const category = { id, name }
    for (;;) {
      const { rows: [found] } = await client.query<CategoryRow>({ ...SQL.findForUpdate, values: [String(id)] })
      const current = found === undefined ? undefined : rowToCategory(found)
      if (current?.name === name) return { outcome: 'unchanged', category }
      const { rows: [holder] } = await client.query<CategoryRow>({ ...SQL.findByName, values: [name] })
      if (holder !== undefined) return { outcome: 'name_taken', holder: rowToCategory(holder) }
      if (current === undefined) {
        const { rows } = await client.query({ ...SQL.insert, values: [String(id), name] })
        if (rows.length === 0) continue
      } else {
        await client.query({ ...SQL.rename, values: [name, String(id)] })
      }
      await recordPostgresEvents(this.#database, client, new Date(this.#clock.now()),
        [{ type: 'category.updated', data: categoryUpdatedData(category, current?.name ?? null) }])
      return { outcome: current === undefined ? 'created' : 'replaced', category }
    }
  }
}
