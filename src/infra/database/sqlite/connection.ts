import { closeSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { Database } from './driver.js'
import { SQLITE_BUSY_TIMEOUT_MS } from '../../config/config.js'

/** Where a SQLite store keeps its data: a file, or memory for throw-away runs. */
export type SqliteLocation = { path: string } | { memory: true }

/** Modes of what the store creates: it holds key hashes and webhook secrets, for the service's user alone. */
export const PRIVATE_DIRECTORY_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/**
 * Creates `path` empty with {@link PRIVATE_FILE_MODE} unless it exists (an existing file keeps its mode).
 * SQLite takes an empty file for a new database, and creates its `-wal` and `-shm` with the database's mode.
 */
export function createPrivateFile (path: string): void {
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

/**
 * Opens a connection with the store's settings: WAL with `synchronous=FULL`, so a committed
 * transaction has been fsync'd before the call returns; a missing directory is created (0700), and
 * a missing file (0600).
 */
export function openSqliteDatabase (location: SqliteLocation): BetterSqlite3.Database {
  let db: BetterSqlite3.Database
  if ('path' in location) {
    mkdirSync(dirname(location.path), { recursive: true, mode: PRIVATE_DIRECTORY_MODE })
    createPrivateFile(location.path)
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
