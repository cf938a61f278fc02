import type Database from 'better-sqlite3'
import type { EventLookup, EventPage, EventPageQuery, EventPurge, EventStore } from './event-store.js'
import { EVENT_COLUMNS, rowToEvent, type EventRow } from './event-rows.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'

const SQL = {
  listEvents: `SELECT ${EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?`,
  findEvent: `SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`,
  // the types as one JSON array, so one statement serves any number of them
  listEventsOfTypes: `SELECT ${EVENT_COLUMNS} FROM events WHERE type IN (SELECT value FROM json_each(?)) AND id > ? ORDER BY id LIMIT ?`,
  purgedThrough: 'SELECT coalesce(max(purged_through), 0) FROM event_retention',
  purgedThroughOfTypes: 'SELECT coalesce(max(purged_through), 0) FROM event_retention WHERE type IN (SELECT value FROM json_each(?))',
  oldestEventId: 'SELECT min(id) FROM events',
  newestEventId: 'SELECT max(coalesce((SELECT max(id) FROM events), 0), (SELECT coalesce(max(purged_through), 0) FROM event_retention))',
  oldestEvents: 'SELECT id, occurred_at FROM events ORDER BY id LIMIT ?',
  newestOfEachType: 'SELECT type, max(id) AS id FROM events WHERE id <= ? GROUP BY type',
  deleteEventsThrough: 'DELETE FROM events WHERE id <= ?',
  markPurged: 'INSERT INTO event_retention (type, purged_through) VALUES (?, ?) ' +
    'ON CONFLICT (type) DO UPDATE SET purged_through = max(purged_through, excluded.purged_through)'
} as const

type Statements = PreparedStatements<keyof typeof SQL>

/** The change feed of the embedded store, on the database's SQLite connection. */
export class SqliteEventStore implements EventStore {
  readonly #database: SqliteDatabase
  readonly #db: Database.Database
  readonly #statements: () => Statements
  #readPagePrepared: Database.Transaction<(query: EventPageQuery) => EventPage> | undefined

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL, ['purgedThrough', 'purgedThroughOfTypes', 'oldestEventId', 'newestEventId'])
    this.#db = database.connection
  }

  async listEvents (query: EventPageQuery): Promise<EventPage> {
    return this.#run(() => this.#readPage.deferred(query))
  }

  // one read transaction: the page and the retention mark from one snapshot (docs/architecture.md); made once
  get #readPage (): Database.Transaction<(query: EventPageQuery) => EventPage> {
    this.#readPagePrepared ??= this.#db.transaction((query: EventPageQuery): EventPage => {
      const statements = this.#statements()
      const types = query.types === undefined ? undefined : JSON.stringify(query.types)
      const rows = (types === undefined
        ? statements.listEvents.all(query.afterId, query.limit)
        : statements.listEventsOfTypes.all(types, query.afterId, query.limit)) as EventRow[]
      const purgedThrough = (types === undefined ? statements.purgedThrough.get() : statements.purgedThroughOfTypes.get(types)) as number
      return { events: rows.map(rowToEvent), purgedThrough }
    })
    return this.#readPagePrepared
  }

  async findEvent (id: number): Promise<EventLookup> {
    return this.#run(() => {
      const row = this.#statements().findEvent.get(id) as EventRow | undefined
      // the mark after the miss: a purge that deleted the event committed its mark with it
      return row === undefined ? { found: false, purgedThrough: this.#statements().purgedThrough.get() as number } : { found: true, event: rowToEvent(row) }
    })
  }

  async oldestEventId (): Promise<number | undefined> {
    return this.#run(() => (this.#statements().oldestEventId.get() as number | null) ?? undefined)
  }

  async newestEventId (): Promise<number> {
    return this.#run(() => this.#statements().newestEventId.get() as number)
  }

  async purgeEventsBefore (cutoff: Date, batchSize: number): Promise<EventPurge> {
    const purge = this.#db.transaction((): EventPurge => {
      const statements = this.#statements()
      const oldest = statements.oldestEvents.all(batchSize) as Array<{ id: number, occurred_at: number }>
      const kept = oldest.findIndex((row) => row.occurred_at >= cutoff.getTime())
      const last = oldest[(kept === -1 ? oldest.length : kept) - 1]
      let deleted = 0
      if (last !== undefined) {
        for (const { type, id } of statements.newestOfEachType.all(last.id) as Array<{ type: string, id: number }>) statements.markPurged.run(type, id)
        deleted = statements.deleteEventsThrough.run(last.id).changes
      }
      return { deleted, purgedThrough: statements.purgedThrough.get() as number }
    })
    return this.#run(() => purge.immediate())
  }

  #run<T>(operation: () => T): T {
    return this.#database.run(operation)
  }
}
