import { WAITING_COUNT_LIMIT } from './bus-position-store.js'

// The statements of both engines, written once with `$n` placeholders (SQLite's name them `@pn`).

// one statement: the newest event id is read with the insert (`WHERE true`: SQLite's upsert after a SELECT needs a WHERE)
const ensureBus = 'INSERT INTO bus_positions (bus, published_through, attempted_through) SELECT $1, coalesce(max(id), 0), coalesce(max(id), 0) FROM events WHERE true ' +
  'ON CONFLICT (bus) DO NOTHING'
const findBus = 'SELECT published_through, attempted_through, lease_token, lease_holder, lease_until, ' +
  '(SELECT e.occurred_at FROM events e WHERE e.id > b.published_through ORDER BY e.id LIMIT 1) AS oldest_waiting_at ' +
  'FROM bus_positions b WHERE b.bus = $1'
// the lease and the position checked again in the statement, under the row's lock (PostgreSQL) or the write lock
// (SQLite): two instances never both take it, and a batch read before another instance moved the position is not begun
const beginBatch = 'UPDATE bus_positions SET lease_token = $2, lease_holder = $3, lease_until = $6 + $7, ' +
  'attempted_through = CASE WHEN attempted_through > $5 THEN attempted_through ELSE $5 END ' +
  'WHERE bus = $1 AND published_through = $4 AND (lease_token = $2 OR lease_until IS NULL OR lease_until <= $6) RETURNING lease_until'
const advanceBus = 'UPDATE bus_positions SET published_through = $3, published_at = $4, lease_until = $4 + $5 ' +
  'WHERE bus = $1 AND lease_token = $2 AND published_through <= $3 RETURNING bus'
const recordBusFailure = 'UPDATE bus_positions SET last_error = $3, last_error_at = $4 WHERE bus = $1 AND lease_token = $2'
// the lease ends now: the instance that looks next takes it
const releaseBus = 'UPDATE bus_positions SET lease_token = NULL, lease_holder = NULL, lease_until = $3 WHERE bus = $1 AND lease_token = $2'
const listBuses = 'SELECT b.bus, b.published_through, b.published_at, b.lease_holder, b.lease_until, b.last_error, b.last_error_at, ' +
  '(SELECT max(id) FROM events) AS newest_event_id, ' +
  `(SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.id > b.published_through LIMIT ${WAITING_COUNT_LIMIT}) AS w) AS waiting_events, ` +
  '(SELECT e.occurred_at FROM events e WHERE e.id > b.published_through ORDER BY e.id LIMIT 1) AS oldest_waiting_at ' +
  'FROM bus_positions b ORDER BY b.bus'

/** PostgreSQL's text of each statement (times and ids as bigint). */
export const POSTGRES_BUS_SQL = {
  ensureBus,
  findBus,
  beginBatch: beginBatch.replace('$6 + $7', '$6::bigint + $7::bigint').replace('<= $6)', '<= $6::bigint)').replace('> $5 THEN', '> $5::bigint THEN').replace('= $4 AND', '= $4::bigint AND'),
  advanceBus: advanceBus.replace('$4 + $5', '$4::bigint + $5::bigint').replace('<= $3 ', '<= $3::bigint '),
  recordBusFailure,
  releaseBus,
  listBuses
} as const

/** SQLite's text of each statement: `@pn` where PostgreSQL has `$n` (bound by {@link sqliteParameters}). */
export const SQLITE_BUS_SQL = Object.fromEntries(Object.entries({ ensureBus, findBus, beginBatch, advanceBus, recordBusFailure, releaseBus, listBuses })
  .map(([name, text]) => [name, text.replace(/\$(\d)/g, '@p$1')])) as Record<keyof typeof POSTGRES_BUS_SQL, string>

/** The values of `$1`, `$2`, … as SQLite's named parameters `@p1`, `@p2`, … */
export function sqliteParameters (...values: unknown[]): Record<string, unknown> {
  return Object.fromEntries(values.map((value, index) => [`p${index + 1}`, value]))
}
