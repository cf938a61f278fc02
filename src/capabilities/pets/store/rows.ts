import type { ApiKeyRole } from '../../keys/roles.js'
import { toInt64, type Int64 } from '../../../infra/json/int64.js'
import type { Pet, PetStatus } from '../pet-schemas.js'
import type { ApiKeyRecord } from './pet-store.js'

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

/** The pets columns every query returns, in the order of {@link PetRow}. */
export const PET_COLUMNS = 'id, name, category_id, status'

/** An api_keys row: SQLite keeps times as ISO text, PostgreSQL as timestamptz (a Date). */
export interface ApiKeyRow {
  id: number
  name: string
  role: ApiKeyRole
  created_at: string | Date
  last_used_at: string | Date | null
  revoked_at: string | Date | null
}

/** The api_keys columns every query returns, in the order of {@link ApiKeyRow}. */
export const API_KEY_COLUMNS = 'id, name, role, created_at, last_used_at, revoked_at'

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    createdAt: isoTime(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : isoTime(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : isoTime(row.revoked_at)
  }
}

function isoTime (value: string | Date): string {
  return typeof value === 'string' ? value : value.toISOString()
}
