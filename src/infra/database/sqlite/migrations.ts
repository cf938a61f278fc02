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
 */
export function migrateSqlite (db: Database.Database): MigrationResult {
  const migrate = db.transaction((): MigrationResult => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`)
    const applied = (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v
    const plan = planMigrations('sqlite', applied)
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
