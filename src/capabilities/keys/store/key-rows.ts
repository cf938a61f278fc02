import type { ApiKeyRole } from '../roles.js'
import type { ApiKeyRecord } from './key-store.js'

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
