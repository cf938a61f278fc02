import { withPostgres } from './postgres.js'

/**
 * Runs one SQL statement on the store `databaseUrl` names (SQLite file or PostgreSQL schema) and
 * returns its rows. PostgreSQL's `$1, $2…` placeholders serve both engines.
 */
export async function execSql (databaseUrl: string, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
    const db = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    try {
      const statement = db.prepare(sql.replace(/\$\d+/g, '?'))
      return statement.reader ? statement.all(...params) as Array<Record<string, unknown>> : (statement.run(...params), [])
    } finally {
      db.close()
    }
  }
  return withPostgres(async (client) => (await client.query(sql, params)).rows as Array<Record<string, unknown>>, databaseUrl)
}
