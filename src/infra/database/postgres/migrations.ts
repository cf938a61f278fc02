import pg from 'pg'
import { planMigrations, SchemaTooNewError } from '../migrator.js'
import type { MigrationResult } from '../database-connection.js'
import { isDatabaseError } from './errors.js'
import { PG_TYPES } from './int8.js'
import { LOCKS, lockSql } from './locks.js'

/** Longest a start-up migration step (or the wait for another instance's migration) may take. */
export const MIGRATION_TIMEOUT_MS = 5 * 60_000

/**
 * A connection of its own for migrating, with a longer bound than a request's: a migration, or
 * waiting for another instance's, may take a while, but a silent network must not hang start-up forever.
 */
export function migrationClient (url: string, connectTimeoutMs: number): pg.Client {
  return new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    // the server cancels a step (or the wait for the lock) that runs too long; the client-side
    // bound, a little later, only ends a wait on a network that went silent
    statement_timeout: MIGRATION_TIMEOUT_MS,
    query_timeout: MIGRATION_TIMEOUT_MS + 5_000,
    keepAlive: true,
    application_name: 'petstore-migrate',
    types: PG_TYPES
  })
}

/**
 * Applies the pending migrations in one transaction under an advisory lock: every instance
 * starting at once waits there; the first applies, the others then find nothing to do.
 */
export async function migratePostgres (client: pg.Client): Promise<MigrationResult> {
  await client.query('BEGIN')
  try {
    const { rows } = await client.query<{ schema: string | null, encoding: string }>(
      "SELECT current_schema() AS schema, current_setting('server_encoding') AS encoding")
    if (rows[0]?.schema == null) throw new Error('the search_path names no schema that exists; create the schema first')
    // any other encoding cannot hold every name a client may send: those creates would fail
    if (rows[0].encoding !== 'UTF8') throw new Error(`the database encoding is ${rows[0].encoding}; petstore needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`)
    await client.query(`SELECT ${lockSql(LOCKS.migrations)}`)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const applied = (await client.query<{ v: number }>('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations')).rows[0]?.v ?? 0
    const plan = planMigrations('postgres', applied)
    for (const migration of plan.pending) {
      await client.query(migration.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
    }
    await client.query('COMMIT')
    return plan.result
  } catch (error) {
    // after a server-side error the session still answers; after a driver error it may not
    if (isDatabaseError(error) || error instanceof SchemaTooNewError) await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}
