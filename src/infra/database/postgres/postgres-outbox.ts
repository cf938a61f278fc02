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

// the CTE that takes the changes lock, which whatever must be drawn in commit order selects from; the pets' statement
// triggers lock `pet_counts` rows at the statement's end, after it: every change takes the changes lock, then those
// rows, so that two changes never wait on each other in a circle. Taken again in one transaction, it costs nothing
const CHANGES_LOCK_CTE = `ordered AS (SELECT ${lockSql(LOCKS.changes)})`

/**
 * A statement whose new ids must be drawn in commit order, as the events' are (a keyset list must never skip a row
 * committed after a page passed its id), for a change whose events are recorded after it in the same transaction
 * (an order's insert, whose `order.created` is built from the row). Its `change` CTEs select `FROM ordered`, as in
 * {@link EventRecordingStatement}, which takes the changes lock until commit; `result` is its `SELECT`.
 */
export function commitOrderedStatement (name: string, { change, result }: { change: string, result: string }): Statement {
  return { name, text: `WITH ${CHANGES_LOCK_CTE}, ${change} ${result}` }
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

// the events of a statement that records events known before it: their types and data (JSON text) in the order
// given, and their time ($1, $2, $3); a change made in the same statement numbers its own placeholders from $4
const KNOWN_EVENTS = {
  input: 'input AS (SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t (type, data, position))',
  events: { select: 'input.type, $3::timestamptz, input.data::json', from: 'input', orderBy: 'input.position' }
} as const

/**
 * A statement that records events known before it, in the order given, inside the caller's transaction, as
 * {@link EventRecordingStatement} does; with `change` (CTEs whose placeholders start at `$4`), a change made by the
 * same statement: one round trip for both (the pets an order moves, say, with both events). Prepared once per
 * connection under `name`.
 */
export class KnownEventsStatement {
  readonly #statement: EventRecordingStatement
  readonly #changes: boolean

  constructor (name: string, { change, alsoNotify = [] }: { change?: string, alsoNotify?: readonly string[] } = {}) {
    this.#changes = change !== undefined
    this.#statement = new EventRecordingStatement(name, { change: change === undefined ? KNOWN_EVENTS.input : `${KNOWN_EVENTS.input}, ${change}`, events: KNOWN_EVENTS.events, alsoNotify })
  }

  /** The SQL, for tests and `EXPLAIN`. */
  get text (): string {
    return this.#statement.text
  }

  /** Records `events` at `occurredAt` with the change of `changeValues` (`$4` on); without events, a statement without a change does nothing. */
  async record (database: PostgresDatabase, client: pg.PoolClient, occurredAt: Date, events: readonly NewEvent[], changeValues: readonly unknown[] = []): Promise<void> {
    if (events.length === 0) {
      // the changes lock is taken where the events are inserted: a change without events would be made without it
      if (this.#changes) throw new Error('a change recorded with no event')
      return
    }
    await this.#statement.run(database, client, [events.map((event) => event.type), events.map((event) => stringifyJson(event.data)), occurredAt, ...changeValues])
  }
}

const RECORD_EVENTS = new KnownEventsStatement('petstore-record-events')

/**
 * Records `events`, in the order given, inside `client`'s transaction, as {@link EventRecordingStatement} does:
 * for a change whose events are known before the statement (an order placed, say).
 */
export async function recordPostgresEvents (database: PostgresDatabase, client: pg.PoolClient, occurredAt: Date, events: readonly NewEvent[]): Promise<void> {
  await RECORD_EVENTS.record(database, client, occurredAt, events)
}
