import type pg from 'pg'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { Int64 } from '../../../infra/json/int64.js'

/**
 * Whether a pet has an open order, asked by updatePet inside its transaction (the pet's row locked, or SQLite's
 * write lock held): the order's id, or undefined. Orders answer it from their own table; pets, which orders
 * import, cannot import them, so the order store of each database registers its answer when it is made.
 */
export type FindSqliteOpenOrder = (petId: Int64) => number | undefined
/** {@link FindSqliteOpenOrder} on PostgreSQL: asked on the transaction's client. */
export type FindPostgresOpenOrder = (client: pg.PoolClient, petId: Int64) => Promise<number | undefined>

const sqliteOpenOrders = new WeakMap<SqliteDatabase, FindSqliteOpenOrder>()
const postgresOpenOrders = new WeakMap<PostgresDatabase, FindPostgresOpenOrder>()

/** Called by the order store of `database`: how it finds a pet's open order. */
export function registerSqliteOpenOrders (database: SqliteDatabase, find: FindSqliteOpenOrder): void {
  sqliteOpenOrders.set(database, find)
}

/** Called by the order store of `database`: how it finds a pet's open order. */
export function registerPostgresOpenOrders (database: PostgresDatabase, find: FindPostgresOpenOrder): void {
  postgresOpenOrders.set(database, find)
}

// no order store on the database: no capability keeps orders there, so no pet has one
const NONE_SQLITE: FindSqliteOpenOrder = () => undefined
const NONE_POSTGRES: FindPostgresOpenOrder = async () => undefined

/** How the pet store of `database` asks whether a pet has an open order. */
export function sqliteOpenOrderFinder (database: SqliteDatabase): FindSqliteOpenOrder {
  return sqliteOpenOrders.get(database) ?? NONE_SQLITE
}

/** How the pet store of `database` asks whether a pet has an open order. */
export function postgresOpenOrderFinder (database: PostgresDatabase): FindPostgresOpenOrder {
  return postgresOpenOrders.get(database) ?? NONE_POSTGRES
}
