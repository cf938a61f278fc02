import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { BusLease, BusName, BusPositionStore, BusStatus } from './bus-position-store.js'
import { rowToBusLease, rowToBusStatus, type BusLeaseRow, type BusStatusRow } from './bus-rows.js'
import { SQLITE_BUS_SQL as SQL, sqliteParameters } from './bus-sql.js'

/**
 * The buses' positions and leases in the SQLite file. Writes commit without waiting for the disk
 * (`runWithoutFsync`): a position lost to a power cut is published again, which consumers already allow
 * (at least once), and an fsync per batch would stall the event loop the requests share.
 */
export class SqliteBusPositionStore implements BusPositionStore {
  readonly #database: SqliteDatabase
  readonly #statements: () => PreparedStatements<keyof typeof SQL>

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL)
  }

  async ensureBus (bus: BusName): Promise<void> {
    this.#database.runWithoutFsync(() => this.#statements().ensureBus.run(sqliteParameters(bus)))
  }

  async findBus (bus: BusName): Promise<BusLease | undefined> {
    const row = this.#database.run(() => this.#statements().findBus.get(sqliteParameters(bus))) as BusLeaseRow | undefined
    return row === undefined ? undefined : rowToBusLease(row)
  }

  async beginBatch (bus: BusName, token: string, holder: string, position: number, through: number, now: number, leaseMs: number): Promise<number | undefined> {
    const row = this.#database.runWithoutFsync(() => this.#statements().beginBatch.get(sqliteParameters(bus, token, holder, position, through, now, leaseMs))) as { lease_until: number } | undefined
    return row?.lease_until
  }

  async advanceBus (bus: BusName, token: string, through: number, now: number, leaseMs: number): Promise<boolean> {
    return this.#database.runWithoutFsync(() => this.#statements().advanceBus.get(sqliteParameters(bus, token, through, now, leaseMs))) !== undefined
  }

  async recordBusFailure (bus: BusName, token: string, message: string, now: number): Promise<void> {
    this.#database.runWithoutFsync(() => this.#statements().recordBusFailure.run(sqliteParameters(bus, token, message, now)))
  }

  async releaseBus (bus: BusName, token: string, now: number): Promise<void> {
    this.#database.runWithoutFsync(() => this.#statements().releaseBus.run(sqliteParameters(bus, token, now)))
  }

  async listBuses (now: number): Promise<BusStatus[]> {
    return (this.#database.run(() => this.#statements().listBuses.all()) as BusStatusRow[]).map((row) => rowToBusStatus(row, now))
  }
}
