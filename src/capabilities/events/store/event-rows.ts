import type { Event, EventType } from '../event-types.js'
import { parseJson } from '../../../infra/json/exact-json.js'

/** An events row: SQLite keeps the time as ms and `data` as text; PostgreSQL as timestamptz (a Date) and json (parsed exactly). */
export interface EventRow {
  id: number
  type: EventType
  occurred_at: number | Date
  data: string | object
}

/** The events columns every query returns, in the order of {@link EventRow}. */
export const EVENT_COLUMNS = 'id, type, occurred_at, data'

export function rowToEvent (row: EventRow): Event {
  // as text (SQLite) or already parsed (PostgreSQL's json parser, postgres/int8.ts): both exactly, int64 values beyond 2^53 as bigints
  const data = typeof row.data === 'string' ? parseJson(row.data) : row.data
  return { id: row.id, type: row.type, occurredAt: new Date(row.occurred_at).toISOString(), data }
}
