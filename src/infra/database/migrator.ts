import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { INSTALL_ROOT } from '../runtime/install-root.js'
import type { MigrationResult } from './database-connection.js'

/** One versioned SQL file, e.g. `0001_init.sql`. */
export interface Migration {
  version: number
  name: string
  sql: string
}

export type Dialect = 'sqlite' | 'postgres'

// in the installation, beside src/ and dist/: the same folder whichever build (or the source) runs
const MIGRATIONS_ROOT = join(INSTALL_ROOT, 'migrations')

/** Reads the migrations of a dialect, in version order. */
export function loadMigrations (dialect: Dialect): Migration[] {
  const dir = join(MIGRATIONS_ROOT, dialect)
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d+)_([\w-]+)\.sql$/.exec(file)
      if (match === null) throw new Error(`migration file ${file} must be named NNNN_name.sql`)
      return { version: Number(match[1]), name: file, sql: readFileSync(join(dir, file), 'utf8') }
    })
    .sort((a, b) => a.version - b.version)
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migrations for ${dialect} must be numbered 1, 2, 3… without gaps; found ${migration.name}`)
  })
  return migrations
}

/** The database was migrated by a newer release than this code. */
export class SchemaTooNewError extends Error {
  constructor (databaseVersion: number, codeVersion: number) {
    super(`the database schema is at version ${databaseVersion}, newer than this petstore release knows (${codeVersion}); ` +
      'run a release at least as new as the one that migrated it')
    this.name = 'SchemaTooNewError'
  }
}

/** What a database at some version needs: the migrations to apply, in order, and the version after them. */
export interface MigrationPlan {
  pending: Migration[]
  result: MigrationResult
}

/**
 * The migration runner, shared by both engines: reads the dialect's files and plans what a
 * database at `appliedVersion` needs, refusing one that a newer release migrated. Each engine runs
 * the plan under its own lock, in one transaction (SQLite synchronously: its lock wait blocks the thread).
 */
export function planMigrations (dialect: Dialect, appliedVersion: number): MigrationPlan {
  const migrations = loadMigrations(dialect)
  const latest = migrations.length
  if (appliedVersion > latest) throw new SchemaTooNewError(appliedVersion, latest)
  const pending = migrations.slice(appliedVersion)
  return { pending, result: { version: Math.max(appliedVersion, latest), applied: pending.map((migration) => migration.name) } }
}
