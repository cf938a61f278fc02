import { loadConfig } from '../../src/infra/config/config.js'
import { openDatabase } from '../../src/infra/database/open-database.js'
import { execSql } from './databases.js'

const DAY_MS = 86_400_000
// what a pet.created event's data looks like; retention never reads it
const DATA = '{"pet":{"id":1,"name":"Rex","categoryId":1,"status":"available"}}'

/**
 * Writes `old` events that occurred 30 days ago, then `recent` ones that occurred now, straight into the
 * store (one statement each: a million rows in a second or two), with ids 1 to old + recent. A new
 * store is migrated first.
 */
export async function insertEvents (databaseUrl: string, counts: { old: number, recent: number }): Promise<void> {
  const { database } = await openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database)
  await database.close()
  const sqlite = databaseUrl.startsWith('sqlite:')
  for (const [count, at] of [[counts.old, Date.now() - 30 * DAY_MS], [counts.recent, Date.now()]] as const) {
    await execSql(databaseUrl, sqlite
      ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) INSERT INTO events (type, occurred_at, data) SELECT 'pet.created', ${at}, '${DATA}' FROM n`
      : `INSERT INTO events (type, occurred_at, data) SELECT 'pet.created', to_timestamp(${at} / 1000.0), '${DATA}'::json FROM generate_series(1, ${count})`)
  }
}

export async function countEvents (databaseUrl: string): Promise<number> {
  const [row] = await execSql(databaseUrl, 'SELECT count(*) AS count FROM events')
  return Number(row?.count)
}

/** The events left and what retention recorded: their count, smallest and largest id, and the highest id it deleted (0: none). */
export async function retentionState (databaseUrl: string): Promise<{ count: number, minId: number, maxId: number, purgedThrough: number }> {
  const [events] = await execSql(databaseUrl, 'SELECT count(*) AS count, min(id) AS min_id, max(id) AS max_id FROM events')
  const [purged] = await execSql(databaseUrl, 'SELECT coalesce(max(purged_through), 0) AS purged_through FROM event_retention')
  return { count: Number(events?.count), minId: Number(events?.min_id), maxId: Number(events?.max_id), purgedThrough: Number(purged?.purged_through) }
}
