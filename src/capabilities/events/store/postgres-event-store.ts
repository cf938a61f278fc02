import type pg from 'pg'
import type { EventLookup, EventPage, EventPageQuery, EventPurge, EventStore } from './event-store.js'
import { EVENT_COLUMNS, rowToEvent, type EventRow } from './event-rows.js'
import type { Statement } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'

/** Runs one statement on the database's pool (errors already mapped to store errors). */
type RunQuery = <R extends pg.QueryResultRow>(statement: Statement, values: unknown[]) => Promise<R[]>

// a page and the retention mark (of its types, or of all) in one statement, so one snapshot: a purge is seen by both or by neither
const pageSql = (filter: string, markFilter: string): string =>
  `SELECT (SELECT coalesce(max(purged_through), 0) FROM event_retention${markFilter}) AS purged_through, e.* ` +
  `FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT ${EVENT_COLUMNS} FROM events WHERE ${filter} ORDER BY id LIMIT $2) AS e ON true ORDER BY e.id`

const SQL = {
  listEvents: { name: 'petstore-list-events', text: pageSql('id > $1', '') },
  listEventsOfTypes: { name: 'petstore-list-events-of-types', text: pageSql('type = ANY($3::text[]) AND id > $1', ' WHERE type = ANY($3::text[])') },
  // the mark in the same statement: a purge that deleted the event is seen with its mark
  findEvent: {
    name: 'petstore-find-event',
    text: `SELECT (SELECT coalesce(max(purged_through), 0) FROM event_retention) AS purged_through, e.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1) AS e ON true`
  },
  oldestEventId: { text: 'SELECT min(id) AS id FROM events' },
  newestEventId: { name: 'petstore-newest-event-id', text: 'SELECT GREATEST(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT max(purged_through) FROM event_retention), 0)) AS id' },
  // the oldest `$2` events, of which the expired prefix (up to the first one at or after the cutoff `$1`) is
  // deleted and marked per type, in one statement; purges running at once on several instances delete each row once
  purgeEvents: {
    text: 'WITH head AS (SELECT id, occurred_at FROM events ORDER BY id LIMIT $2), ' +
      'kept AS (SELECT min(id) AS id FROM head WHERE occurred_at >= $1), ' +
      'last AS (SELECT max(head.id) AS id FROM head, kept WHERE kept.id IS NULL OR head.id < kept.id), ' +
      'gone AS (DELETE FROM events WHERE id <= (SELECT id FROM last) RETURNING id, type), ' +
      'marked AS (INSERT INTO event_retention (type, purged_through) SELECT type, max(id) FROM gone GROUP BY type ' +
      'ON CONFLICT (type) DO UPDATE SET purged_through = GREATEST(event_retention.purged_through, excluded.purged_through) RETURNING purged_through) ' +
      'SELECT (SELECT count(*) FROM gone)::int AS deleted, ' +
      'coalesce(GREATEST((SELECT max(purged_through) FROM marked), (SELECT max(purged_through) FROM event_retention)), 0) AS purged_through'
  }
} as const

type PageRow = { purged_through: number } & { [column in keyof EventRow]: EventRow[column] | null }

/** The change feed of the shared store, on the database's pool. */
export class PostgresEventStore implements EventStore {
  readonly #query: RunQuery

  constructor (database: PostgresDatabase) {
    this.#query = async (statement, values) => await database.query(statement, values)
  }

  async listEvents (query: EventPageQuery): Promise<EventPage> {
    const rows = query.types === undefined
      ? await this.#query<PageRow>(SQL.listEvents, [query.afterId, query.limit])
      : await this.#query<PageRow>(SQL.listEventsOfTypes, [query.afterId, query.limit, query.types])
    const events = rows.flatMap((row) => row.id === null ? [] : [rowToEvent(row as EventRow)])
    return { events, purgedThrough: rows[0]?.purged_through ?? 0 }
  }

  async findEvent (id: number): Promise<EventLookup> {
    const [row] = await this.#query<PageRow>(SQL.findEvent, [id])
    return row === undefined || row.id === null ? { found: false, purgedThrough: row?.purged_through ?? 0 } : { found: true, event: rowToEvent(row as EventRow) }
  }

  async oldestEventId (): Promise<number | undefined> {
    const rows = await this.#query<{ id: number | null }>(SQL.oldestEventId, [])
    return rows[0]?.id ?? undefined
  }

  async newestEventId (): Promise<number> {
    const rows = await this.#query<{ id: number }>(SQL.newestEventId, [])
    return rows[0]?.id ?? 0
  }

  async purgeEventsBefore (cutoff: Date, batchSize: number): Promise<EventPurge> {
    const rows = await this.#query<{ deleted: number, purged_through: number }>(SQL.purgeEvents, [cutoff, batchSize])
    return { deleted: rows[0]?.deleted ?? 0, purgedThrough: rows[0]?.purged_through ?? 0 }
  }
}
