import type { PostgresDatabase } from './postgres/postgres-database.js'
import type { SqliteDatabase } from './sqlite/sqlite-database.js'

export type { DatabaseConnection, MigrationResult } from './database-connection.js'

/** An open database of either engine, told apart by `kind`: what the composition root hands each capability. */
export type Database = SqliteDatabase | PostgresDatabase
