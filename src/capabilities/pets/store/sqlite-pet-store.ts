import type Database from 'better-sqlite3'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { recordSqliteEvents } from '../../../infra/database/sqlite/sqlite-outbox.js'
import { IdempotencyClaimLostError, writeBatchItem, type IdempotencyCompletion } from '../../idempotency/index.js'
import { decidePetUpdate, petChanged, type PetPrecondition, type PetUpdateOutcome } from '../pet-update.js'
import { petCreatedData, petUpdatedData } from '../pet-events.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { Pet, PetPatch } from '../pet-schemas.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import { groupCreates, type PendingCreate } from './pending-create.js'
import { MAX_PETS_PER_READ, type NewPetRecord, type PetPage, type PetPageQuery, type PetStore } from './pet-store.js'
import { rowToPet, type PetRow } from './rows.js'
import { SQL } from './sqlite-sql.js'
import { registerPetsChanged } from './pets-changed.js'
import { sqliteOpenOrderFinder } from './open-orders.js'
import { countsOf, type PetCountRow, type PetCounts } from './pet-counts.js'
import { GroupRead, sharedPerTurn } from '../../../infra/database/group-read.js'

type Statements = PreparedStatements<keyof typeof SQL>

/** The pets of the embedded database: creates grouped into one transaction (one fsync) per event-loop turn. */
export class SqlitePetStore implements PetStore {
  readonly #database: SqliteDatabase
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #statements: () => Statements
  #updatePrepared: Database.Transaction<(id: Int64, patch: PetPatch, precondition?: PetPrecondition) => PetUpdateOutcome> | undefined
  // bumped by this connection's own commits of pets, and when another connection committed anything
  #listVersion = 0
  #dataVersion: number | undefined
  readonly #creates = groupCreates((items) => this.#run(() => this.#insertBatch.immediate(items)))
  #insertBatchPrepared: Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> | undefined
  readonly #petsById = new GroupRead<Int64, Pet>(async (ids) => this.#findPets(ids), MAX_PETS_PER_READ)
  readonly #counts = sharedPerTurn(async () => this.#run(() => countsOf(this.#statements().countPets.all() as PetCountRow[])))

  constructor (database: SqliteDatabase, clock: Clock) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL, ['dataVersion'])
    this.#db = database.connection
    this.#clock = clock
    // an order's change of a pet, committed by the orders' store on this connection
    registerPetsChanged(database, () => { this.#listVersion++ })
  }

  async createPet (pet: NewPetRecord, completing?: IdempotencyCompletion): Promise<Pet> {
    return await this.#creates.submit({ pet, completing })
  }

  // one IMMEDIATE transaction, one fsync, for the whole batch; each pet with its event and its claim's
  // completion, a pet with a claim in a savepoint of its own, so a lost claim drops only that pet. Made once, on first use
  get #insertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    this.#insertBatchPrepared ??= this.#prepareInsertBatch()
    return this.#insertBatchPrepared
  }

  #prepareInsertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    const statements = this.#statements()
    const insertOne = ({ pet, completing }: PendingCreate, now: number): Pet => {
      const created = rowToPet(statements.insertPet.get(pet.name, pet.categoryId, pet.status) as PetRow)
      recordSqliteEvents(this.#database, now, [{ type: 'pet.created', data: petCreatedData(created) }])
      if (completing !== undefined) {
        const { changes } = statements.completeIdempotencyKey.run(201, stringifyJson(created), completing.scope, completing.key, completing.token)
        if (changes !== 1) throw new IdempotencyClaimLostError()
      }
      return created
    }
    const insertInSavepoint = this.#db.transaction(insertOne)
    return this.#db.transaction((items: readonly PendingCreate[]) => {
      // whatever the outcome, pets may have changed: pages read before must not be reused
      this.#listVersion++
      const now = this.#clock.now()
      return items.map((item) => writeBatchItem(item, (plain) => insertOne(plain, now), (claimed) => insertInSavepoint(claimed, now)))
    })
  }

  listVersion (): number | undefined {
    if (!this.#db.open) return undefined
    // SQLite's data_version changes when another connection (a worker, the CLI) has committed
    const dataVersion = this.#statements().dataVersion.get() as number
    if (dataVersion !== this.#dataVersion) {
      this.#dataVersion = dataVersion
      this.#listVersion++
    }
    return this.#listVersion
  }

  async findPetById (id: Int64): Promise<Pet | undefined> {
    return await this.#petsById.get(id)
  }

  #findPets (ids: readonly Int64[]): ReadonlyMap<Int64, Pet> {
    return this.#run(() => {
      const found = new Map<Int64, Pet>()
      const together: number[] = []
      for (const id of ids) {
        // a lone id, or one beyond 2^53 (a row's plain id column would not come back exact), is read by itself
        if (typeof id === 'number' && ids.length > 1) {
          together.push(id)
          continue
        }
        const row = this.#statements().findPet.get(id) as PetRow | undefined
        if (row !== undefined) found.set(id, rowToPet(row))
      }
      if (together.length === 0) return found
      for (const row of this.#statements().findPets.all(JSON.stringify(together)) as PetRow[]) found.set(row.id, rowToPet(row))
      return found
    })
  }

  async updatePet (id: Int64, patch: PetPatch, precondition?: PetPrecondition): Promise<PetUpdateOutcome> {
    return this.#run(() => this.#update.immediate(id, patch, precondition))
  }

  // the read, the checks and the write under one write lock (run IMMEDIATE, across processes too); made once
  get #update (): Database.Transaction<(id: Int64, patch: PetPatch, precondition?: PetPrecondition) => PetUpdateOutcome> {
    this.#updatePrepared ??= this.#db.transaction((id: Int64, patch: PetPatch, precondition?: PetPrecondition): PetUpdateOutcome => {
      const statements = this.#statements()
      const row = statements.findPet.get(id) as PetRow | undefined
      const outcome = decidePetUpdate(row === undefined ? undefined : rowToPet(row), patch, precondition, () => sqliteOpenOrderFinder(this.#database)(id))
      if (outcome.outcome === 'updated' && petChanged(outcome.previous, outcome.pet)) {
        const { pet } = outcome
        statements.updatePet.run(pet.name, pet.categoryId, pet.status, pet.id)
        recordSqliteEvents(this.#database, this.#clock.now(), [{ type: 'pet.updated', data: petUpdatedData(outcome.previous, pet) }])
        // pages read before must not be reused (this connection's own commits leave data_version alone)
        this.#listVersion++
      }
      return outcome
    })
    return this.#updatePrepared
  }

  async listPets (query: PetPageQuery): Promise<PetPage> {
    return this.#run(() => {
      const afterId = query.afterId ?? 0
      // one row more than asked tells whether a next page exists
      const rows = (query.status === undefined
        ? this.#statements().listPets.all(afterId, query.limit + 1)
        : this.#statements().listPetsByStatus.all(query.status, afterId, query.limit + 1)) as PetRow[]
      const hasMore = rows.length > query.limit
      return { pets: rows.slice(0, query.limit).map(rowToPet), hasMore }
    })
  }

  async countPetsByStatus (): Promise<PetCounts> {
    return await this.#counts()
  }

  #run<T>(operation: () => T): T {
    return this.#database.run(operation)
  }
}
