import { randomBytes } from 'node:crypto'
import { withPostgres } from './postgres.js'

/** The database one run of the suites uses, and how to remove it. */
export interface RunDatabase {
  url: string
  drop: () => Promise<void>
  /** Why no database of the run's own was made: `url` is then the server URL's own, and `drop` does nothing. */
  refused?: string
}

/**
 * A new database `petstore_run_<hex>` on the server of `serverUrl`, for one run of the suites: each test's
 * schema is made in it, and dropping it at the end takes every catalog row those schemas left behind.
 * In the database `serverUrl` names they would stay: a DROP SCHEMA leaves its tables' rows in pg_class,
 * pg_attribute and pg_depend as dead tuples until a vacuum, and a server without autovacuum (this
 * machine kind's) never runs one, so each run's 1,300 schemas made every later run's catalog look-ups
 * slower (pg_attribute at 330 MB after five runs; a schema's migrations took 74 ms of the server's CPU
 * instead of 46). When the database cannot be created (no CREATEDB, no server), `serverUrl`'s own, saying why.
 */
export async function createRunDatabase (serverUrl: string): Promise<RunDatabase> {
  const name = `petstore_run_${randomBytes(6).toString('hex')}`
  try {
    await withPostgres((client) => client.query(`CREATE DATABASE ${name}`), serverUrl)
  } catch (error) {
    return { url: serverUrl, drop: async () => {}, refused: error instanceof Error ? error.message : String(error) }
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    // FORCE: a connection a crashed or timed-out test left open does not keep the database
    drop: async () => { await withPostgres((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), serverUrl) }
  }
}
