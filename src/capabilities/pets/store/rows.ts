import { toInt64, type Int64 } from '../../../infra/json/int64.js'
import type { Pet, PetStatus } from '../pet-schemas.js'

/**
 * A pets row as both engines return it: the id as a number (ids are assigned below 2^53), the category
 * id exactly, as an Int64 (PostgreSQL's int8 parser, postgres/int8.ts) or, beyond 2^53, as decimal text
 * (SQLite, see sqlite/sql.ts).
 */
export interface PetRow {
  id: number
  name: string
  category_id: Int64 | string
  status: PetStatus
}

export function rowToPet (row: PetRow): Pet {
  const categoryId = typeof row.category_id === 'string' ? toInt64(BigInt(row.category_id)) : row.category_id
  return { id: row.id, name: row.name, categoryId, status: row.status }
}

/** The column each field of a Pet is stored in, in the order of {@link PetRow}. */
export const PET_FIELD_COLUMNS: Readonly<Record<keyof Pet, string>> = { id: 'id', name: 'name', categoryId: 'category_id', status: 'status' }

/** The pets columns every query returns, in the order of {@link PetRow}. */
export const PET_COLUMNS = Object.values(PET_FIELD_COLUMNS).join(', ')
