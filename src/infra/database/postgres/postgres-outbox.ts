import type pg from 'pg'
import { EVENTS_RECORDED_CHANNEL } from '../commit-signal.js'
import type { NewEvent } from '../new-event.js'
import { stringifyJson } from '../../json/exact-json.js'
import { LOCKS, lockSql, type Statement } from './locks.js'
import type { PostgresDatabase } from './postgres-database.js'

/** The statement's parts that are the change's own; the writer adds the lock, the notifications and the insert into `events`. */
export interface ChangeParts {
  /**
   * The change's CTEs (`name AS (…), …`). Whatever must be drawn in commit order (new ids) selects `FROM ordered`:
   * that CTE takes the changes lock. `notified` holds the notifications, for a CTE that must run them.
   */
  change: string
  /** The events, in the order their ids are drawn: `select` (type, occurred_at, data) from `from` (the change's CTEs), ordered by `orderBy`. */
  events: { select: string, from: string, orderBy: string }
  /** The statement's rows: a `SELECT` over the change's CTEs; left out, the insert of the events is the statement. */
  result?: string
  /** Channels notified at commit besides the events' own (`petstore_pets_changed`: list pages are stale). */
  alsoNotify?: readonly string[]
}

/**
 * The CTE `ordered`, which takes the changes lock: for a statement that must hold it before it changes rows that the
 * events will follow. A change of pets does (their statement triggers lock the `pet_counts` rows, and every change
 * takes the changes lock first, then those rows, so that two changes never wait on each other in a circle); the
 * writer takes it again when it records the events, which costs nothing within one transaction.
 */
export const CHANGES_LOCK_CTE = `ordered AS (SELECT ${lockSql(LOCKS.changes)})`

const TAKE_CHANGES_LOCK: Statement = { name: 'petstore-take-changes-lock', text: `SELECT ${lockSql(LOCKS.changes)}` }

/** Takes the changes lock in `client`'s transaction now, as {@link CHANGES_LOCK_CTE} does in a statement of the change. */
export async function takeChangesLock (client: pg.PoolClient): Promise<void> {
  await client.query(TAKE_CHANGES_LOCK)
}

const notifications = (channels: readonly string[]): string => channels.map((channel) => `pg_notify('${channel}', current_schema())`).join(', ')

/**
 * One PostgreSQL statement that makes a change and records its events: the outbox's one writer on this engine
 * (docs/architecture.md, "The change feed"). It takes `LOCKS.changes` before any id is drawn and holds it until
 * commit, so ids are drawn in commit order; inserts the events; notifies `petstore_events_recorded` (and
 * `alsoNotify`) at commit for the other instances; and, run by {@link EventRecordingStatement.run}, raises the
 * database's `eventsRecorded` once the transaction has ended, for this instance's listeners. One round trip, so
 * a group commit stays one statement; prepared once per connection under `name`.
 */
export class EventRecordingStatement {
  readonly #statement: Statement

  constructor (name: string, { change, events, result, alsoNotify = [] }: ChangeParts) {
    const record = `INSERT INTO events (type, occurred_at, data) SELECT ${events.select} FROM ${events.from}, ordered, notified ORDER BY ${events.orderBy}`
    const head = `WITH ${CHANGES_LOCK_CTE}, notified AS (SELECT ${notifications([EVENTS_RECORDED_CHANNEL, ...alsoNotify])}), ${change}`
    this.#statement = { name, text: result === undefined ? `${head} ${record}` : `${head}, recorded AS (${record}) ${result}` }
  }

  /** The SQL, for tests and `EXPLAIN`. */
  get text (): string {
    return this.#statement.text
  }

  /**
   * Runs the statement in `executor`'s transaction (a client of `database.transaction`), or alone on the pool (then
   * it is its own transaction); `eventsRecorded` is raised when that transaction has ended, also when it failed.
   */
  async run<R extends pg.QueryResultRow>(database: PostgresDatabase, executor: pg.PoolClient | pg.Pool, values: unknown[]): Promise<R[]> {
    try {
      return (await executor.query<R>({ ...this.#statement, values })).rows
    } finally {
      database.afterTransaction(executor, database.eventsRecorded.raise)
    }
  }
}

const RECORD_EVENTS = {
  change: 'input AS (SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t (type, data, position))',
  events: { select: 'input.type, $3::timestamptz, input.data::json', from: 'input', orderBy: 'input.position' }
} as const
// by the channel also notified ('' none): a few statements, each prepared once per connection
const recordEventsStatements = new Map<string, EventRecordingStatement>()

function recordEventsStatement (alsoNotify: string): EventRecordingStatement {
  let statement = recordEventsStatements.get(alsoNotify)
  if (statement === undefined) {
    statement = alsoNotify === ''
      ? new EventRecordingStatement('petstore-record-events', RECORD_EVENTS)
      : new EventRecordingStatement(`petstore-record-events-${alsoNotify}`, { ...RECORD_EVENTS, alsoNotify: [alsoNotify] })
    recordEventsStatements.set(alsoNotify, statement)
  }
  return statement
}

/**
 * Records `events`, in the order given, inside `client`'s transaction, as {@link EventRecordingStatement} does:
 * for a change whose events are known before the statement (an order placed, say). `alsoNotify` is a channel
 * notified at commit besides the events' own (the change also moved pets, say).
 */
export async function recordPostgresEvents (
  database: PostgresDatabase, client: pg.PoolClient, occurredAt: Date, events: readonly NewEvent[], alsoNotify = ''
): Promise<void> {
  if (events.length === 0) return
  await recordEventsStatement(alsoNotify).run(database, client, [events.map((event) => event.type), events.map((event) => stringifyJson(event.data)), occurredAt])
}
