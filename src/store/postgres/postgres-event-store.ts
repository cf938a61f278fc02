import type pg from 'pg'
import type { EventPage, EventPageQuery, EventPurge, EventStore } from '../event-store.js'
import { EVENT_COLUMNS, rowToEvent, type EventRow } from '../event-rows.js'
import type { Statement } from './sql.js'

/** Runs one statement on the store's pool (errors already mapped to store errors). */
export type RunQuery = <R extends pg.QueryResultRow>(statement: Statement, values: unknown[]) => Promise<R[]>

// a page and the retention mark in one statement, so one snapshot: a purge is seen by both or by neither
const pageSql = (filter: string): string => 'SELECT r.purged_through, e.* FROM event_retention AS r LEFT JOIN LATERAL ' +
  `(SELECT ${EVENT_COLUMNS} FROM events WHERE ${filter} ORDER BY id LIMIT $2) AS e ON true ORDER BY e.id`

const SQL = {
  listEvents: { name: 'petstore-list-events', text: pageSql('id > $1') },
  listEventsByType: { name: 'petstore-list-events-by-type', text: pageSql('type = $3 AND id > $1') },
  oldestEventId: { text: 'SELECT min(id) AS id FROM events' },
  // the oldest `$2` events, of which the expired prefix (up to the first one at or after the cutoff `$1`) is
  // deleted and marked, in one statement; purges running at once on several instances delete each row once
  purgeEvents: {
    text: 'WITH head AS (SELECT id, occurred_at FROM events ORDER BY id LIMIT $2), ' +
      'kept AS (SELECT min(id) AS id FROM head WHERE occurred_at >= $1), ' +
      'last AS (SELECT max(head.id) AS id FROM head, kept WHERE kept.id IS NULL OR head.id < kept.id), ' +
      'gone AS (DELETE FROM events WHERE id <= (SELECT id FROM last) RETURNING 1), ' +
      'marked AS (UPDATE event_retention SET purged_through = GREATEST(purged_through, COALESCE((SELECT id FROM last), 0)) RETURNING purged_through) ' +
      'SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT purged_through FROM marked) AS purged_through'
  }
} as const

// the event's columns are null when no event follows `$1`: the mark still comes back
type PageRow = { purged_through: number } & { [column in keyof EventRow]: EventRow[column] | null }

/** The change feed of the shared store, on the pool its {@link PostgresPetStore} holds. */
export class PostgresEventStore implements EventStore {
  readonly #query: RunQuery

  constructor (query: RunQuery) {
    this.#query = query
  }

  async listEvents (query: EventPageQuery): Promise<EventPage> {
    const rows = query.type === undefined
      ? await this.#query<PageRow>(SQL.listEvents, [query.afterId, query.limit])
      : await this.#query<PageRow>(SQL.listEventsByType, [query.afterId, query.limit, query.type])
    const events = rows.flatMap((row) => row.id === null ? [] : [rowToEvent(row as EventRow)])
    return { events, purgedThrough: rows[0]?.purged_through ?? 0 }
  }

  async oldestEventId (): Promise<number | undefined> {
    const rows = await this.#query<{ id: number | null }>(SQL.oldestEventId, [])
    return rows[0]?.id ?? undefined
  }

  async purgeEventsBefore (cutoff: Date, batchSize: number): Promise<EventPurge> {
    const rows = await this.#query<{ deleted: number, purged_through: number }>(SQL.purgeEvents, [cutoff, batchSize])
    return { deleted: rows[0]?.deleted ?? 0, purgedThrough: rows[0]?.purged_through ?? 0 }
  }
}
