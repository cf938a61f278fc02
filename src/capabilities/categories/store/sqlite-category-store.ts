import type Database from 'better-sqlite3'
import { exactInt64Column } from '../../../infra/database/sqlite/exact-int64.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { recordSqliteEvents } from '../../../infra/database/sqlite/sqlite-outbox.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { categoryUpdatedData, type CategoryRecord } from '../category-event-schemas.js'
import { rowToCategory, type CategoryRow, type CategoryStore, type PutCategoryOutcome } from './category-store.js'

// an id beyond 2^53 comes back as its decimal text
const COLUMNS = `${exactInt64Column('id')}, name`

const SQL = {
  find: `SELECT ${COLUMNS} FROM categories WHERE id = ?`,
  findByName: `SELECT ${COLUMNS} FROM categories WHERE name = ?`,
  list: `SELECT ${COLUMNS} FROM categories WHERE id >= ? ORDER BY id LIMIT ?`,
  insert: 'INSERT INTO categories (id, name) VALUES (?, ?)',
  rename: 'UPDATE categories SET name = ? WHERE id = ?'
} as const

type Put = (id: Int64, name: string) => PutCategoryOutcome

/** The categories of the embedded database: a name given in one IMMEDIATE transaction with its event. */
export class SqliteCategoryStore implements CategoryStore {
  readonly #database: SqliteDatabase
  readonly #clock: Clock
  // prepared on first use, because preparing needs the tables that migrating creates
  readonly #statements: () => PreparedStatements<keyof typeof SQL>
  #put: Database.Transaction<Put> | undefined

  constructor (database: SqliteDatabase, clock: Clock) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL)
    this.#clock = clock
  }

  async findCategory (id: Int64): Promise<CategoryRecord | undefined> {
    return this.#database.run(() => {
      const row = this.#statements().find.get(id) as CategoryRow | undefined
      return row === undefined ? undefined : rowToCategory(row)
    })
  }

  async listCategories (from: Int64, limit: number): Promise<CategoryRecord[]> {
    return this.#database.run(() => (this.#statements().list.all(from, limit) as CategoryRow[]).map(rowToCategory))
  }

  async putCategory (id: Int64, name: string): Promise<PutCategoryOutcome> {
    this.#put ??= this.#database.connection.transaction<Put>((categoryId, categoryName) => this.#putLocked(categoryId, categoryName))
    const put = this.#put
    return this.#database.run(() => put.immediate(id, name))
  }

  #putLocked (id: Int64, name: string): PutCategoryOutcome {
    const statements = this.#statements()
    const found = statements.find.get(id) as CategoryRow | undefined
    const current = found === undefined ? undefined : rowToCategory(found)
    const category = { id, name }
    if (current?.name === name) return { outcome: 'unchanged', category }
    const holder = statements.findByName.get(name) as CategoryRow | undefined
    if (holder !== undefined) return { outcome: 'name_taken', holder: rowToCategory(holder) }
    if (current === undefined) statements.insert.run(id, name)
    else statements.rename.run(name, id)
    recordSqliteEvents(this.#database, this.#clock.now(), [{ type: 'category.updated', data: categoryUpdatedData(category, current?.name ?? null) }])
    return { outcome: current === undefined ? 'created' : 'replaced', category }
  }
}
