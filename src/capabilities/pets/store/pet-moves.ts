import type pg from 'pg'
import type { NewEvent } from '../../../infra/database/new-event.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { recordSqliteEvents } from '../../../infra/database/sqlite/sqlite-outbox.js'
import type { Int64 } from '../../../infra/json/int64.js'
import { petUpdatedData } from '../pet-events.js'
import type { Pet, PetStatus } from '../pet-schemas.js'
import { notePetsChanged } from './pets-changed.js'
import { SQL as POSTGRES_SQL } from './postgres-sql.js'
import { rowToPet, type PetRow } from './rows.js'
import { SQL as SQLITE_SQL } from './sqlite-sql.js'

/**
 * How another capability's store changes pets inside its own transaction (an order placed, delivered or
 * cancelled moves its pet's status): the pets' port. The caller reads the pets it judges through it, then
 * hands it the moves with its own events; the pets' SQL, the lock order, the `pet.updated` events and the
 * note that list pages are stale stay here.
 */

/** A pet to move to `status`, and the caller's events that follow its `pet.updated` in the feed (the order's own). */
export interface PetMove {
  pet: Pet
  status: PetStatus
  followedBy: readonly NewEvent[]
}

/** Each move's `pet.updated`, followed by the caller's events, in the order of the moves. */
function eventsOf (moves: readonly PetMove[]): NewEvent[] {
  return moves.flatMap(({ pet, status, followedBy }) => [{ type: 'pet.updated', data: petUpdatedData(pet, { ...pet, status }) }, ...followedBy])
}

/**
 * The pets of the embedded database as another store's transaction reads and moves them, on the database's one
 * connection: the transaction holds the write lock, or takes it at its first write.
 */
export class SqlitePetMoves {
  readonly #database: SqliteDatabase
  readonly #statements: () => PreparedStatements<'findPet' | 'setPetStatus'>

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse({ findPet: SQLITE_SQL.findPet, setPetStatus: SQLITE_SQL.setPetStatus })
  }

  findPet (id: Int64): Pet | undefined {
    const row = this.#statements().findPet.get(id) as PetRow | undefined
    return row === undefined ? undefined : rowToPet(row)
  }

  /** Moves the pets and records their events with the caller's, inside the caller's transaction; its pages are stale from now. */
  movePets (moves: readonly PetMove[], occurredAt: number): void {
    if (moves.length === 0) return
    for (const { pet, status } of moves) this.#statements().setPetStatus.run(status, pet.id)
    recordSqliteEvents(this.#database, occurredAt, eventsOf(moves))
    // this connection's own commits leave data_version alone
    notePetsChanged(this.#database)
  }
}

/**
 * The pets of the shared database as another store's transaction locks and moves them. The locks come in one
 * order: the pets' rows (the caller's own rows before them), then, in the statement that moves them, the changes
 * lock, then the `pet_counts` rows its triggers update; every change of pets takes them in that order, so two
 * never wait on each other in a circle.
 */
export class PostgresPetMoves {
  readonly #database: PostgresDatabase
  readonly #noteChanged = (): void => { notePetsChanged(this.#database) }

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  /** The pet, its row locked until the caller's transaction ends. */
  async lockPet (client: pg.PoolClient, id: Int64): Promise<Pet | undefined> {
    const { rows } = await client.query<PetRow>({ ...POSTGRES_SQL.findPetForUpdate, values: [id] })
    return rows[0] === undefined ? undefined : rowToPet(rows[0])
  }

  /** The pets of these ids that exist, by id as text, their rows locked in id order: two such locks never wait on each other in a circle. */
  async lockPets (client: pg.PoolClient, ids: readonly Int64[]): Promise<Map<string, Pet>> {
    const { rows } = await client.query<PetRow>({ ...POSTGRES_SQL.findPetsForUpdate, values: [ids] })
    return new Map(rows.map((row) => { const pet = rowToPet(row); return [String(pet.id), pet] }))
  }

  /**
   * Moves pets locked by {@link lockPets} or {@link lockPet} and records their events with the caller's, in one
   * statement (the outbox writer's: the changes lock, then the move); every instance's list pages are stale once
   * the transaction has ended (this one's at once, the others' by the pets' channel, notified at commit).
   */
  async movePets (client: pg.PoolClient, moves: readonly PetMove[], occurredAt: Date): Promise<void> {
    if (moves.length === 0) return
    // also when the commit's outcome is unknown: a page read before must not be served after it
    this.#database.afterTransaction(client, this.#noteChanged)
    await POSTGRES_SQL.movePets.record(this.#database, client, occurredAt, eventsOf(moves),
      [moves.map(({ pet }) => pet.id), moves.map(({ status }) => status)])
  }
}
