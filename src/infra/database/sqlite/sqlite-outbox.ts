import type BetterSqlite3 from 'better-sqlite3'
import type { NewEvent } from '../new-event.js'
import { stringifyJson } from '../../json/exact-json.js'
import type { SqliteDatabase } from './sqlite-database.js'

// prepared once per database, on first use (preparing needs the table that migrating creates)
const insertOf = new WeakMap<SqliteDatabase, BetterSqlite3.Statement>()

/**
 * Records `events`, in the order given, inside the transaction of their change: the outbox's one writer on
 * SQLite (docs/architecture.md, "The change feed"). The transaction holds the one write lock, so ids are
 * drawn in commit order; other processes see the commit by `PRAGMA data_version`; this instance's
 * `eventsRecorded` is raised once the (synchronous) transaction has ended. Outside a transaction it throws: an
 * event is never committed apart from its change.
 */
export function recordSqliteEvents (database: SqliteDatabase, occurredAt: number, events: readonly NewEvent[]): void {
  if (!database.connection.inTransaction) throw new Error('events are recorded inside the transaction of their change')
  let insert = insertOf.get(database)
  if (insert === undefined) {
    insert = database.connection.prepare('INSERT INTO events (type, occurred_at, data) VALUES (?, ?, ?)')
    insertOf.set(database, insert)
  }
  for (const event of events) insert.run(event.type, occurredAt, stringifyJson(event.data))
  database.eventsRecorded.raiseAfterThisTask()
}
