import pg from 'pg'
import { StoreUnavailableError } from '../../errors/catalogue.js'
import { CommitSignal } from '../commit-signal.js'
import type { DatabaseConnection, MigrationResult } from '../database-connection.js'
import type { ChangeListener } from './change-listener.js'
import { describePostgres } from './connection.js'
import { toStoreError } from './errors.js'
import { PG_TYPES } from './int8.js'
import type { Statement } from './locks.js'
import { migratePostgres, migrationClient } from './migrations.js'
import { NotificationListener } from './notification-listener.js'

export interface PostgresDatabaseOptions {
  /** A libpq-style connection string (`postgres://…`); `options=-c search_path=…` selects a schema. */
  url: string
  /** Most connections this instance opens. */
  poolSize: number
  /** Longest wait for a connection, and separately for one query, before a call gives up. */
  timeoutMs: number
  /** Told about failures outside any call, e.g. an idle connection the server dropped. */
  onBackgroundError?: (error: Error) => void
}

const SQL = {
  insertSetting: { text: 'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING' },
  findSetting: { text: 'SELECT value FROM settings WHERE name = $1' },
  ping: { name: 'petstore-ping', text: 'SELECT 1' }
} as const

/**
 * The server's `statement_timeout` for a client that waits `timeoutMs` for a query: a tenth sooner, at least
 * 100 ms (at most half). With the two equal, the client could give up just before the server ran a statement
 * that had waited for a lock, which then committed: a create answered 503 but stored.
 */
export function serverStatementTimeout (timeoutMs: number): number {
  return Math.max(timeoutMs - Math.max(100, timeoutMs / 10), timeoutMs / 2)
}

/**
 * The shared database of several instances, reached through a bounded pool shared by every
 * capability's store. A call that cannot get a connection, or whose query does not finish, within
 * `timeoutMs` fails with {@link StoreUnavailableError} (a 503); the pool opens fresh connections once
 * the server is back.
 */
export class PostgresDatabase implements DatabaseConnection {
  readonly kind = 'postgres'
  readonly description: string
  readonly options: PostgresDatabaseOptions
  readonly #pool: pg.Pool
  readonly eventsRecorded = new CommitSignal()
  readonly #closers: Array<() => Promise<void>> = []
  // what runs when each open transaction of transaction() ends, by its client
  readonly #endings = new WeakMap<pg.PoolClient, Set<() => void>>()
  #notifications: NotificationListener | undefined
  #closed = false

  constructor (options: PostgresDatabaseOptions) {
    this.options = options
    this.description = describePostgres(options.url)
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.timeoutMs,
      // the server cancels a slow statement first, so one the client stopped waiting for was never
      // committed; the client-side timeout covers a silent network
      statement_timeout: serverStatementTimeout(options.timeoutMs),
      query_timeout: options.timeoutMs,
      keepAlive: true,
      application_name: 'petstore',
      types: PG_TYPES
    })
    // an idle connection that the server or network drops emits here; unhandled, it would crash the process
    this.#pool.on('error', (error) => { options.onBackgroundError?.(error) })
  }

  /** True once {@link PostgresDatabase.close} was called. */
  get closed (): boolean {
    return this.#closed
  }

  /** Runs `work` on the pool itself (a statement sent without a transaction), its errors mapped to store errors. */
  async onPool<T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> {
    try {
      return await work(this.#pool)
    } catch (error) {
      throw toStoreError(error)
    }
  }

  /**
   * `channel` heard with `LISTEN`: a version that moves with each notification for this schema (and while not
   * listening, is unknown). Every channel is heard over one connection of its own beside the pool, opened on first
   * use and closed when the database closes.
   */
  listen (channel: string): ChangeListener {
    if (this.#notifications === undefined) {
      const { url, timeoutMs, onBackgroundError } = this.options
      const notifications = new NotificationListener({ url, timeoutMs, ...(onBackgroundError === undefined ? {} : { onBackgroundError }) })
      this.closeWith(async () => { await notifications.close() })
      this.#notifications = notifications
    }
    return this.#notifications.channel(channel)
  }

  /** Runs one statement on the pool; its rows, errors mapped to store errors. */
  async query<R extends pg.QueryResultRow = Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> {
    try {
      return (await this.#pool.query<R>({ ...statement, values })).rows
    } catch (error) {
      throw toStoreError(error)
    }
  }

  /** Runs `work` in a transaction; it is rolled back instead of committed when `rollBack(result)` is true. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, rollBack?: (result: T) => boolean): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error)
    }
    const ending = new Set<() => void>()
    this.#endings.set(client, ending)
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query(rollBack?.(result) === true ? 'ROLLBACK' : 'COMMIT')
      this.#endings.delete(client)
      client.release()
      return result
    } catch (error) {
      this.#endings.delete(client)
      // a connection in an unknown state is not given back to the pool
      client.release(error instanceof Error ? error : true)
      throw toStoreError(error)
    } finally {
      for (const then of ending) then()
    }
  }

  /**
   * Runs `then` once the transaction `executor` works in has ended, committed, rolled back or failed (each
   * function once per transaction): a client of {@link transaction} when it ends; the pool, whose statement is a
   * transaction of its own, at once (call it after the statement).
   */
  afterTransaction (executor: pg.PoolClient | pg.Pool, then: () => void): void {
    const ending = this.#endings.get(executor as pg.PoolClient)
    if (ending === undefined) then()
    else ending.add(then)
  }

  async migrate (): Promise<MigrationResult> {
    const client = migrationClient(this.options.url, this.options.timeoutMs)
    client.on('error', (error) => { this.options.onBackgroundError?.(error) })
    try {
      await client.connect()
      const result = await migratePostgres(client)
      await client.end()
      return result
    } catch (error) {
      // not awaited: on a dead network closing can hang, and the server rolls back when the session ends
      client.end().catch(() => {})
      const mapped = toStoreError(error)
      // at start-up this is the message the operator reads: say which database
      if (mapped instanceof StoreUnavailableError) mapped.message = `${this.description}: ${mapped.message}`
      throw mapped
    }
  }

  async ping (): Promise<void> {
    await this.query(SQL.ping, [])
  }

  async ensureSetting (name: string, initialValue: string): Promise<string> {
    // two statements: the second one's snapshot sees a value another instance committed meanwhile
    await this.query(SQL.insertSetting, [name, initialValue])
    const row = (await this.query<{ value: string }>(SQL.findSetting, [name]))[0]
    if (row === undefined) throw new Error('the setting was not stored')
    return row.value
  }

  closeWith (close: () => Promise<void>): void {
    this.#closers.push(close)
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const close of this.#closers.splice(0)) await close()
    await this.#pool.end()
  }
}
