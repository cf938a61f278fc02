import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { execSql } from './databases.js'

/**
 * Reads what changes whenever anything writes to the store `databaseUrl` names: two equal readings mean nothing
 * was written in between. SQLite: its data_version, from a connection of its own (it moves with every other
 * connection's commit). PostgreSQL: every table of the schema, each one's rows counted and its live row versions
 * hashed as where they are (ctid), which transaction wrote them (xmin) and which last locked them (xmax): an
 * insert, update or delete, or a row lock, changes that, and a read never does. Not pg_stat_user_tables' counters:
 * a backend sends them at most once a second and only when idle, so a write could show after the window, or an
 * earlier one within it. Not the WAL position either: it is the whole server's, and other test files write to it
 * meanwhile. The tables are those of the schema when this is called.
 */
export async function watchWrites (t: TestContext, databaseUrl: string): Promise<() => Promise<unknown>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const reader = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true })
    t.after(() => { reader.close() })
    return async () => reader.pragma('data_version', { simple: true })
  }
  const tables = (await execSql(databaseUrl, 'SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename'))
    .map((row) => String(row.tablename))
  assert.ok(tables.length > 0 && tables.every((table) => /^[a-z_0-9]+$/.test(table)), `the schema's tables: ${tables.join(', ')}`)
  const versions = tables.map((table) => `SELECT '${table}' AS "table", count(*)::int AS rows, ` +
    `md5(coalesce(string_agg(ctid::text || ' ' || xmin::text || ' ' || xmax::text, ',' ORDER BY ctid), '')) AS versions FROM "${table}"`)
  return async () => await execSql(databaseUrl, `${versions.join(' UNION ALL ')} ORDER BY 1`)
}
