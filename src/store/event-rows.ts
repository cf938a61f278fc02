import type { Event, EventType } from '../schemas/event.js'

/** An events row: SQLite keeps the time as ms and `data` as text; PostgreSQL as timestamptz (a Date) and json (parsed). */
export interface EventRow {
  id: number
  type: EventType
  occurred_at: number | Date
  data: string | object
}

/** The events columns every query returns, in the order of {@link EventRow}. */
export const EVENT_COLUMNS = 'id, type, occurred_at, data'

export function rowToEvent (row: EventRow): Event {
  const data = typeof row.data === 'string' ? JSON.parse(row.data) as unknown : row.data
  return { id: row.id, type: row.type, occurredAt: new Date(row.occurred_at).toISOString(), data } as Event
}
