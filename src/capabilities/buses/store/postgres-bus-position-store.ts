import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { BusLease, BusName, BusPositionStore, BusStatus } from './bus-position-store.js'
import { rowToBusStatus, type BusStatusRow } from './bus-rows.js'
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
    const row = (await this.#database.query<{ published_through: number, lease_token: string | null, lease_until: number | null, waiting: boolean }>(
      statement('findBus'), [bus]))[0]
    return row === undefined ? undefined : { publishedThrough: row.published_through, leaseToken: row.lease_token ?? undefined, leaseUntil: row.lease_until ?? undefined, waiting: row.waiting }
  }

  async claimBus (bus: BusName, token: string, holder: string, now: number, leaseMs: number): Promise<number | undefined> {
    return (await this.#database.query<{ published_through: number }>(statement('claimBus'), [bus, token, holder, now, leaseMs]))[0]?.published_through
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
