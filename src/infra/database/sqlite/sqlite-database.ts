import type BetterSqlite3 from 'better-sqlite3'
import { CommitSignal } from '../commit-signal.js'
import type { DatabaseConnection, MigrationResult } from '../database-connection.js'
import { describeSqlite, openSqliteDatabase, type SqliteLocation } from './connection.js'
import { toStoreError } from './errors.js'
import { migrateSqlite } from './migrations.js'

/** Each statement of a capability's SQL, prepared. */
export type PreparedStatements<K extends string> = { readonly [name in K]: BetterSqlite3.Statement }

/**
 * The embedded database: one SQLite file in WAL mode with `synchronous=FULL` (a committed transaction
 * has been fsync'd before the call returns), one connection shared by every capability's store.
 */
export class SqliteDatabase implements DatabaseConnection {
  readonly kind = 'sqlite'
  readonly description: string
  /** The connection; a store prepares its statements on it once migrated ({@link SqliteDatabase.prepare}). */
  readonly connection: BetterSqlite3.Database
  readonly eventsRecorded = new CommitSignal()
  readonly #closers: Array<() => Promise<void>> = []
  #settings: PreparedStatements<'insertSetting' | 'findSetting' | 'ping'> | undefined

  constructor (location: SqliteLocation) {
    this.description = describeSqlite(location)
    this.connection = openSqliteDatabase(location)
  }

  /** Each statement of `texts` prepared on the connection; those named in `plucked` return their first column alone. */
  prepare<K extends string>(texts: Readonly<Record<K, string>>, plucked: ReadonlyArray<NoInfer<K>> = []): PreparedStatements<K> {
    const statements = Object.fromEntries(Object.entries<string>(texts).map(([name, text]) => [name, this.connection.prepare(text)])) as Record<K, BetterSqlite3.Statement>
    for (const name of plucked) statements[name].pluck()
    return statements
  }

  /**
   * {@link prepare}'s statements, prepared on the first call of what this returns and the same ever after: a store is
   * built before migrating creates the tables its statements name.
   */
  preparedOnFirstUse<K extends string>(texts: Readonly<Record<K, string>>, plucked: ReadonlyArray<NoInfer<K>> = []): () => PreparedStatements<K> {
    let prepared: PreparedStatements<K> | undefined
    return () => (prepared ??= this.prepare(texts, plucked))
  }

  /** Runs `operation`, its engine and disk failures mapped to StoreUnavailableError (a 503). */
  run<T>(operation: () => T): T {
    try {
      return operation()
    } catch (error) {
      throw toStoreError(error, this.connection.open)
    }
  }

  /**
   * Runs `operation` as {@link run} does, but its commits do not wait for the disk (`synchronous=NORMAL` for it
   * alone): they survive the process crashing, and the file stays consistent whatever happens, but a power
   * loss or an OS crash may undo the last of them, unless a later commit of {@link run} made them durable
   * with it. For writes that are redone when lost; each fsync saved is time the event loop is not blocked.
   */
  runWithoutFsync<T>(operation: () => T): T {
    // through pragma() each time: a prepared PRAGMA statement takes effect when prepared, not when run
    this.run(() => this.connection.pragma('synchronous = NORMAL'))
    try {
      return this.run(operation)
    } finally {
      if (this.connection.open) this.connection.pragma('synchronous = FULL')
    }
  }

  get #statements (): PreparedStatements<'insertSetting' | 'findSetting' | 'ping'> {
    this.#settings ??= this.prepare({
      insertSetting: 'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      findSetting: 'SELECT value FROM settings WHERE name = ?',
      ping: 'SELECT 1'
    })
    return this.#settings
  }

  async migrate (): Promise<MigrationResult> {
    return this.run(() => migrateSqlite(this.connection))
  }

  async ping (): Promise<void> {
    this.run(() => this.#statements.ping.get())
  }

  async ensureSetting (name: string, initialValue: string): Promise<string> {
    return this.run(() => {
      this.#statements.insertSetting.run(name, initialValue)
      return (this.#statements.findSetting.get(name) as { value: string }).value
    })
  }

  closeWith (close: () => Promise<void>): void {
    this.#closers.push(close)
  }

  async close (): Promise<void> {
    if (!this.connection.open) return
    for (const close of this.#closers.splice(0)) await close()
    this.connection.close()
  }
}
