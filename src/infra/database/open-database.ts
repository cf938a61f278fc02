import type { DatabaseLocation } from '../config/config.js'
import type { Database, MigrationResult } from './database.js'
import { describePostgres } from './postgres/connection.js'

export interface OpenDatabaseOptions {
  /** Told about database failures that happen outside any call (e.g. a dropped idle connection). */
  onBackgroundError?: (error: Error) => void
}

/** A database as opened, and what migrating it did. */
export interface OpenedDatabase {
  database: Database
  migration: MigrationResult
}

/**
 * Opens the database `DATABASE_URL` names and brings its schema up to date. Each engine's module is
 * loaded only when it is used, so the SQLite path never loads `pg` and the reverse.
 */
export async function openDatabase (location: DatabaseLocation, options: OpenDatabaseOptions = {}): Promise<OpenedDatabase> {
  const database = await connect(location, options)
  try {
    return { database, migration: await database.migrate() }
  } catch (error) {
    await database.close()
    throw error
  }
}

/** The location as logs and the CLI show it (never a password), without opening anything. */
export function describeDatabase (location: DatabaseLocation): string {
  switch (location.kind) {
    case 'sqlite': return `sqlite:${location.path}`
    case 'sqlite-memory': return 'sqlite::memory:'
    case 'postgres': return describePostgres(location.url)
  }
}

async function connect (location: DatabaseLocation, options: OpenDatabaseOptions): Promise<Database> {
  switch (location.kind) {
    case 'sqlite':
    case 'sqlite-memory': {
      const { SqliteDatabase } = await import('./sqlite/sqlite-database.js')
      return new SqliteDatabase(location.kind === 'sqlite' ? { path: location.path } : { memory: true })
    }
    case 'postgres': {
      const { PostgresDatabase } = await import('./postgres/postgres-database.js')
      return new PostgresDatabase({ url: location.url, poolSize: location.poolSize, timeoutMs: location.timeoutMs, ...options })
    }
  }
}
