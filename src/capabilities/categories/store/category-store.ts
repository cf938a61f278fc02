import { toInt64, type Int64 } from '../../../infra/json/int64.js'
import type { CategoryRecord } from '../category-event-schemas.js'

/** What `putCategory` did: named a category that had no record, renamed one, nothing (the same name), or nothing because another has the name. */
export type PutCategoryOutcome =
  | { outcome: 'created' | 'replaced' | 'unchanged', category: CategoryRecord }
  | { outcome: 'name_taken', holder: CategoryRecord }

/**
 * The categories' records (an id and its name) as stored: one implementation per engine. A name given is recorded
 * with its `category.updated` event in one transaction (the outbox's writer of the engine). The pets a category has
 * are the pets' to count (`app.petCategoryCounts`).
 */
export interface CategoryStore {
  /** The record of this id, or undefined. */
  findCategory (id: Int64): Promise<CategoryRecord | undefined>
  /** The records whose id is `from` or more (int64 order), at most `limit`. */
  listCategories (from: Int64, limit: number): Promise<CategoryRecord[]>
  /** Gives the category `id` the name `name`; resolves once the write (and its event) is durable. */
  putCategory (id: Int64, name: string): Promise<PutCategoryOutcome>
}

/** A categories row: the id exactly (SQLite gives one beyond 2^53 as decimal text). */
export interface CategoryRow { id: Int64 | string, name: string }

export function rowToCategory (row: CategoryRow): CategoryRecord {
  return { id: typeof row.id === 'string' ? toInt64(BigInt(row.id)) : row.id, name: row.name }
}
