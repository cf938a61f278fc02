import { compareInt64, INT64_MAX, INT64_MIN, toInt64, type Int64 } from '../../infra/json/int64.js'
import { PET_STATUSES, type PetCategoryCounts, type PetCounts } from '../pets/index.js'
import type { CategoryRecord } from './category-event-schemas.js'
import type { Category } from './category-schemas.js'
import type { CategoryStore } from './store/category-store.js'

/** The counts of a category no pet carries. */
export const NO_PETS: PetCounts = Object.freeze(Object.fromEntries(PET_STATUSES.map((status) => [status, 0])) as PetCounts)

/** Where a page after the id `after` starts (inclusive); undefined when no id comes after it. */
export function firstIdAfter (after: Int64 | undefined): Int64 | undefined {
  if (after === undefined) return toInt64(INT64_MIN)
  return BigInt(after) >= INT64_MAX ? undefined : toInt64(BigInt(after) + 1n)
}

/** The union of two ascending lists of ids, ascending, each id once. */
export function mergeIds (a: readonly Int64[], b: readonly Int64[]): Int64[] {
  return [...new Set([...a, ...b])].sort(compareInt64)
}

/**
 * A page of categories: the union of the records and of the ids pets carry, in id order, from `from` on, at most
 * `limit`, with their pets' counts (asked of pets); `hasMore` when more follow. A record among the page's ids is among
 * the first `limit + 1` records from `from`, so one read of each side is enough.
 */
export async function readCategoryPage (store: CategoryStore, pets: PetCategoryCounts, from: Int64, limit: number): Promise<{ categories: Category[], hasMore: boolean }> {
  const [records, petIds] = await Promise.all([store.listCategories(from, limit + 1), pets.listPetCategoryIds(from, limit + 1)])
  const ids = mergeIds(records.map(({ id }) => id), petIds)
  const page = ids.slice(0, limit)
  const counts = await pets.countPetsByCategory(page)
  const names = new Map(records.map(({ id, name }) => [String(id), name]))
  return { categories: page.map((id) => ({ id, name: names.get(String(id)) ?? null, pets: counts.get(String(id)) ?? NO_PETS })), hasMore: ids.length > limit }
}

/** The category `id` with its pets' counts, or undefined when it has neither a record nor a pet. */
export async function readCategory (store: CategoryStore, pets: PetCategoryCounts, id: Int64): Promise<Category | undefined> {
  const [record, counts] = await Promise.all([store.findCategory(id), pets.countPetsByCategory([id])])
  const counted = counts.get(String(id))
  if (record === undefined && counted === undefined) return undefined
  return { id, name: record?.name ?? null, pets: counted ?? NO_PETS }
}

/** A record with its pets' counts, read after it was written. */
export async function withPets (pets: PetCategoryCounts, record: CategoryRecord): Promise<Category> {
  const counts = await pets.countPetsByCategory([record.id])
  return { ...record, pets: counts.get(String(record.id)) ?? NO_PETS }
}
