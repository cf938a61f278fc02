import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { Database } from './driver.js'
import { SQLITE_BUSY_TIMEOUT_MS } from '../../config/config.js'

/** Where a SQLite store keeps its data: a file, or memory for throw-away runs. */
export type SqliteLocation = { path: string } | { memory: true }

/**
 * Opens a connection with the store's settings: WAL with `synchronous=FULL`, so a committed
 * transaction has been fsync'd before the call returns; a missing directory is created.
 */
export function openSqliteDatabase (location: SqliteLocation): BetterSqlite3.Database {
  let db: BetterSqlite3.Database
  if ('path' in location) {
    mkdirSync(dirname(location.path), { recursive: true })
    db = new Database(location.path)
  } else {
    db = new Database(':memory:')
  }
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  // the CLI and the server may write the same file at once; a wait blocks the event loop,
  // so it is short, and a longer lock becomes a 503 the client can retry
  db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  return db
}

/** The location as logs show it. */
export function describeSqlite (location: SqliteLocation): string {
  return 'path' in location ? `sqlite:${location.path}` : 'sqlite::memory:'
}
