import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { BusLease, BusName, BusPositionStore, BusStatus } from './bus-position-store.js'
import { rowToBusLease, rowToBusStatus, type BusLeaseRow, type BusStatusRow } from './bus-rows.js'
import { POSTGRES_BUS_SQL as SQL } from './bus-sql.js'

const statement = (name: keyof typeof SQL): { name: string, text: string } => ({ name: `petstore-bus-${name}`, text: SQL[name] })

/** The buses' positions and leases in the shared store, on the database's pool. */
export class PostgresBusPositionStore implements BusPositionStore {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async ensureBus (bus: BusName): Promise<void> {
    await this.#database.query(statement('ensureBus'), [bus])
  }

  async findBus (bus: BusName): Promise<BusLease | undefined> {
    const row = (await this.#database.query<BusLeaseRow>(statement('findBus'), [bus]))[0]
    return row === undefined ? undefined : rowToBusLease(row)
  }

  async beginBatch (bus: BusName, token: string, holder: string, position: number, through: number, now: number, leaseMs: number): Promise<number | undefined> {
    return (await this.#database.query<{ lease_until: number }>(statement('beginBatch'), [bus, token, holder, position, through, now, leaseMs]))[0]?.lease_until
  }

  async advanceBus (bus: BusName, token: string, through: number, now: number, leaseMs: number): Promise<boolean> {
    return (await this.#database.query(statement('advanceBus'), [bus, token, through, now, leaseMs])).length > 0
  }

  async recordBusFailure (bus: BusName, token: string, message: string, now: number): Promise<void> {
    await this.#database.query(statement('recordBusFailure'), [bus, token, message, now])
  }

  async releaseBus (bus: BusName, token: string, now: number): Promise<void> {
    await this.#database.query(statement('releaseBus'), [bus, token, now])
  }

  async listBuses (now: number): Promise<BusStatus[]> {
    return (await this.#database.query<BusStatusRow>(statement('listBuses'), [])).map((row) => rowToBusStatus(row, now))
  }
}
