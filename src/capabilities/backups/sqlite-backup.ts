import { chmod, copyFile, link, mkdir, open, rename, rm, stat } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { Database } from '../../infra/database/sqlite/driver.js'
import { createPrivateFile, PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../infra/database/sqlite/connection.js'

/** What a backup wrote: the file, its size, and the pets it holds. */
export interface SqliteBackup {
  readonly file: string
  readonly bytes: number
  readonly pets: number
}

/** What a restore did: the file now in place, and where the database it replaced was kept. */
export interface SqliteRestore {
  readonly database: string
  readonly pets: number
  /** The replaced database, kept beside it; undefined when there was none. */
  readonly keptAs: string | undefined
  /** The highest event id either database ever issued: the next event gets a higher one. */
  readonly eventIdsIssuedThrough: number
}

/** A backup or restore that could not be made; the message says why, for the operator. */
export class SqliteBackupError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SqliteBackupError'
  }
}

/**
 * Restore refused: another connection (a running server, a worker, a CLI command) has the database open.
 * SQLite lets a connection take a WAL database out of WAL mode only when it is the one connection open
 * on it, and every server keeps its connection open while it runs: that refusal is how restore knows.
 */
export class SqliteDatabaseInUseError extends SqliteBackupError {}

/**
 * Copies the SQLite store at `database` into `target` while servers keep writing to it: `VACUUM INTO`
 * reads one snapshot in one read transaction (WAL lets writers go on meanwhile), so the copy holds every
 * transaction committed before it began and none half-done. The copy is written beside `target`,
 * fsync'd, passed through `PRAGMA integrity_check`, and only then renamed to `target`.
 */
export async function backupSqlite (database: string, target: string): Promise<SqliteBackup> {
  const file = resolve(target)
  if (file === resolve(database)) throw new SqliteBackupError('the backup file must not be the database itself')
  if (!existsSync(database)) throw new SqliteBackupError(`${database} does not exist: nothing to back up`)
  await mkdir(dirname(file), { recursive: true, mode: PRIVATE_DIRECTORY_MODE })
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}`)
  await rm(partial, { force: true })
  try {
    // VACUUM INTO writes into an empty file as it finds it: created 0600 here, as the database is
    createPrivateFile(partial)
    const source = new Database(database, { fileMustExist: true })
    try {
      // a server may hold the write lock for a moment; a reader in WAL mode only waits on a checkpoint
      source.pragma('busy_timeout = 5000')
      source.prepare('VACUUM INTO ?').run(partial)
    } finally {
      source.close()
    }
    await fsyncFile(partial)
    const pets = checkDatabase(partial, 'the backup')
    await rename(partial, file)
    await fsyncFile(dirname(file))
    return { file, bytes: (await stat(file)).size, pets }
  } catch (error) {
    await rm(partial, { force: true })
    throw error
  }
}

/**
 * Replaces the SQLite store at `database` with the backup `source`, atomically (a rename), keeping the
 * old file beside it as `<database>.before-restore-<time>`. Refuses with {@link SqliteDatabaseInUseError}
 * while any other connection has the database open, and refuses a source that fails
 * `PRAGMA integrity_check` or is not a petstore database. `releases` are statements run on the copy
 * before it takes the database's place, in the transaction that continues its ids: each ends what the
 * processes serving the database held when the backup was taken (a lease, a claim in flight), since
 * none of them serves the restored file.
 */
export async function restoreSqlite (database: string, source: string, releases: readonly string[]): Promise<SqliteRestore> {
  const from = resolve(source)
  if (from === resolve(database)) throw new SqliteBackupError('the backup file must not be the database itself')
  if (!existsSync(from)) throw new SqliteBackupError(`${from} does not exist`)
  checkDatabase(from, from)
  await mkdir(dirname(database), { recursive: true, mode: PRIVATE_DIRECTORY_MODE })
  const incoming = join(dirname(database), `.${basename(database)}.restoring-${process.pid}`)
  await copyFile(from, incoming)
  try {
    // copyFile gives the copy the backup's mode; the database is the service's user's alone
    await chmod(incoming, PRIVATE_FILE_MODE)
    await fsyncFile(incoming)
    const pets = checkDatabase(incoming, 'the copy of the backup')
    const guard = existsSync(database) ? takeSoleUse(database) : undefined
    let keptAs: string | undefined
    let eventIdsIssuedThrough: number
    try {
      // read under sole use: no writer can issue an id after this
      eventIdsIssuedThrough = prepareCopy(incoming, guard === undefined ? [] : issuedIds(guard), releases)
      await fsyncFile(incoming)
      if (guard !== undefined) {
        keptAs = `${database}.before-restore-${new Date().toISOString().replaceAll(':', '-')}`
        await link(database, keptAs)
      }
      // no WAL of the old file may outlive it: SQLite would replay it into the new one
      await rm(`${database}-wal`, { force: true })
      await rm(`${database}-shm`, { force: true })
      await rename(incoming, database)
      await fsyncFile(dirname(database))
    } finally {
      guard?.close()
    }
    return { database, pets, keptAs, eventIdsIssuedThrough }
  } finally {
    await rm(incoming, { force: true })
  }
}

/** What `db`'s AUTOINCREMENT counters say: the highest id each table ever issued. */
function issuedIds (db: BetterSqlite3.Database): Array<{ name: string, seq: number }> {
  return db.prepare('SELECT name, seq FROM sqlite_sequence').all() as Array<{ name: string, seq: number }>
}

/**
 * Raises each AUTOINCREMENT counter of `file` to at least what the replaced database issued, so that no
 * id is issued twice on one installation: an event id is a feed cursor and a `webhook-id` receivers
 * deduplicate by, a pet's or an order's id is a client's reference. Runs `releases` in the same
 * transaction. Returns the events' counter.
 */
function prepareCopy (file: string, issued: ReadonlyArray<{ name: string, seq: number }>, releases: readonly string[]): number {
  const db = new Database(file, { fileMustExist: true })
  try {
    const raise = db.prepare('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?')
    // a table of the backup that never issued an id has no counter yet
    const start = db.prepare('INSERT INTO sqlite_sequence (name, seq) SELECT @name, @seq WHERE ' +
      "EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = @name) AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = @name)")
    db.transaction(() => {
      for (const { name, seq } of issued) {
        raise.run(seq, name)
        start.run({ name, seq })
      }
      for (const release of releases) db.prepare(release).run()
    })()
    const events = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").get() as { seq: number } | undefined
    return events?.seq ?? 0
  } finally {
    db.close()
  }
}

/**
 * Opens `database` and makes this the only connection to it until closed: switching it out of WAL mode
 * (which also checkpoints its WAL into the file) succeeds only when no other connection is open, and the
 * exclusive transaction then keeps new ones out while the file is swapped.
 */
function takeSoleUse (database: string): BetterSqlite3.Database {
  // a running server holds its connection for good, so waiting longer would not help; a passing writer is let finish
  const db = new Database(database, { fileMustExist: true, timeout: 1000 })
  try {
    const mode = db.pragma('journal_mode = DELETE', { simple: true })
    if (mode !== 'delete') throw inUse(database)
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    return db
  } catch (error) {
    db.close()
    if (error instanceof SqliteBackupError) throw error
    const code = (error as { code?: unknown }).code
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') throw inUse(database)
    throw error
  }
}

function inUse (database: string): SqliteDatabaseInUseError {
  return new SqliteDatabaseInUseError(`${database} is open in another process (a running server, worker or petstore command): ` +
    'SQLite refused restore sole use of it. Stop every instance using it, then restore.')
}

/** Runs `PRAGMA integrity_check` on `file` and returns how many pets it holds; throws naming `what` otherwise. */
function checkDatabase (file: string, what: string): number {
  let db: BetterSqlite3.Database
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
  } catch (error) {
    throw new SqliteBackupError(`${what} cannot be opened as a SQLite database: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    const problems = db.pragma('integrity_check', { simple: false }) as Array<{ integrity_check: string }>
    const verdict = problems.map((row) => row.integrity_check)
    if (verdict.length !== 1 || verdict[0] !== 'ok') {
      throw new SqliteBackupError(`${what} failed PRAGMA integrity_check: ${verdict.slice(0, 5).join('; ')}`)
    }
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pets'").get()
    if (table === undefined) throw new SqliteBackupError(`${what} is a SQLite database, but not a petstore one (it has no pets table)`)
    return (db.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n
  } catch (error) {
    if (error instanceof SqliteBackupError) throw error
    throw new SqliteBackupError(`${what} is not a sound SQLite database: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    db.close()
  }
}

/** Flushes a file (or a directory's entries) to disk. */
async function fsyncFile (path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
