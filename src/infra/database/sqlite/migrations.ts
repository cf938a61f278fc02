import type Database from 'better-sqlite3'
import { SQLITE_BUSY_TIMEOUT_MS } from '../../config/config.js'
import { planMigrations } from '../migrator.js'
import type { MigrationResult } from '../database-connection.js'

// how long a start-up migration waits for another process's
const SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 30_000

/**
 * Applies the pending migrations in one IMMEDIATE transaction: the write lock is taken first, so
 * two processes cannot apply the same migration. Synchronous from lock to commit, so that another
 * connection of this process never waits (blocking the thread) on a lock this one holds across an await.
 * A process that finds nothing pending (every `petstore …` command, every instance after the first) takes
 * no write lock at all: the applied version is read, and the migration files planned, outside of one, so
 * that a command never holds up an instance's writes past their busy timeout.
 */
export function migrateSqlite (db: Database.Database): MigrationResult {
  const before = appliedVersion(db)
  const seen = planMigrations('sqlite', before)
  if (seen.pending.length === 0) return seen.result
  const migrate = db.transaction((): MigrationResult => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`)
    // read again under the lock: another process may have migrated since
    const applied = appliedVersion(db)
    const plan = applied === before ? seen : planMigrations('sqlite', applied)
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
    for (const migration of plan.pending) {
      db.exec(migration.sql)
      record.run(migration.version, migration.name, new Date().toISOString())
    }
    return plan.result
  })
  // several processes may start at once (WORKERS, a rolling restart): waiting for another's
  // migration is expected here, unlike for a request
  db.pragma(`busy_timeout = ${SQLITE_MIGRATION_BUSY_TIMEOUT_MS}`)
  try {
    return migrate.immediate()
  } finally {
    db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  }
}

/** The highest migration applied (0 on a new file: no `schema_migrations` yet). */
function appliedVersion (db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get()
  if (table === undefined) return 0
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v
}
