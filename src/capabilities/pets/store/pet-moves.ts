import type pg from 'pg'
import type { NewEvent } from '../../../infra/database/new-event.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { Int64 } from '../../../infra/json/int64.js'
import { petUpdatedData } from '../pet-events.js'
import { PET_STATUSES, type Pet, type PetStatus } from '../pet-schemas.js'
import { notePetsChanged } from './pets-changed.js'
import { SQL as POSTGRES_SQL } from './postgres-sql.js'
import { rowToPet, type PetRow } from './rows.js'
import { SQL as SQLITE_SQL } from './sqlite-sql.js'

/**
 * How another capability's store changes a pet inside its own transaction (an order placed, delivered or
 * cancelled moves its pet's status): the pets' SQL stays here, the caller records the returned
 * `pet.updated` with its own events. Each lock and write is the one updatePet makes, so the lock order
 * the callers keep (docs/architecture.md) is unchanged.
 */

/** A pet moved to `status`: its `pet.updated` event, for the caller to record with its own. */
export function petMovedEvent (pet: Pet, status: PetStatus): NewEvent {
  return { type: 'pet.updated', data: petUpdatedData(pet, { ...pet, status }) }
}

/** The pets of the embedded database as an order's transaction reads and moves them (on its connection, inside its transaction). */
export class SqlitePetMoves {
  readonly #database: SqliteDatabase
  #prepared: PreparedStatements<'findPet' | 'setPetStatus'> | undefined

  constructor (database: SqliteDatabase) {
    this.#database = database
  }

  // prepared on first use, because preparing needs the tables that migrating creates
  get #statements (): PreparedStatements<'findPet' | 'setPetStatus'> {
    this.#prepared ??= this.#database.prepare({ findPet: SQLITE_SQL.findPet, setPetStatus: SQLITE_SQL.setPetStatus })
    return this.#prepared
  }

  findPet (id: Int64): Pet | undefined {
    const row = this.#statements.findPet.get(id) as PetRow | undefined
    return row === undefined ? undefined : rowToPet(row)
  }

  /** Moves the pet to `status`, and tells the pet store (this connection's own commits leave data_version alone). */
  movePet (pet: Pet, status: PetStatus): NewEvent {
    this.#statements.setPetStatus.run(status, pet.id)
    notePetsChanged(this.#database)
    return petMovedEvent(pet, status)
  }
}

/** The pet, its row locked until the caller's transaction ends. */
export async function lockPostgresPet (client: pg.PoolClient, id: Int64): Promise<Pet | undefined> {
  const { rows } = await client.query<PetRow>({ ...POSTGRES_SQL.findPetForUpdate, values: [id] })
  return rows[0] === undefined ? undefined : rowToPet(rows[0])
}

/** The pets of these ids that exist, by id as text, their rows locked in id order: two such locks never wait on each other in a circle. */
export async function lockPostgresPets (client: pg.PoolClient, ids: readonly Int64[]): Promise<Map<string, Pet>> {
  const { rows } = await client.query<PetRow>({ ...POSTGRES_SQL.findPetsForUpdate, values: [ids] })
  return new Map(rows.map((row) => { const pet = rowToPet(row); return [String(pet.id), pet] }))
}

/** Moves a locked pet to `status` (the caller tells the pet store with notePetsChanged once it commits). */
export async function movePostgresPet (client: pg.PoolClient, pet: Pet, status: PetStatus): Promise<NewEvent> {
  await client.query({ ...POSTGRES_SQL.setPetStatus, values: [status, pet.id] })
  return petMovedEvent(pet, status)
}

/**
 * A common table expression for another store's statement (one round trip for a batch): the pets whose ids
 * the rows of `source` name in `petIdColumn` become `status`. Named `name`; it returns nothing.
 */
export function postgresPetsMovedCte (name: string, source: string, petIdColumn: string, status: PetStatus): string {
  if (!PET_STATUSES.includes(status)) throw new Error(`not a pet status: ${String(status)}`)
  return `${name} AS (UPDATE pets SET status = '${status}' FROM ${source} WHERE pets.id = ${source}.${petIdColumn})`
}
