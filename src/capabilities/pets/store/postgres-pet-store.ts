import { IdempotencyClaimLostError, type IdempotencyCompletion } from '../../idempotency/index.js'
import { decidePetUpdate, petChanged, type PetPrecondition, type PetUpdateOutcome } from '../pet-update.js'
import { petUpdatedData } from '../pet-events.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import type { Pet, PetPatch } from '../pet-schemas.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import { groupCreates, type PendingCreate } from './pending-create.js'
import { GroupRead, sharedPerTurn } from '../../../infra/database/group-read.js'
import type { ChangeListener } from '../../../infra/database/postgres/change-listener.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { MAX_PETS_PER_READ, type NewPetRecord, type PetPage, type PetPageQuery, type PetStore } from './pet-store.js'
import { rowToPet, type PetRow } from './rows.js'
import { insertBatch, type BatchInsert } from './postgres-batch-insert.js'
import { PETS_CHANGED_CHANNEL, SQL } from './postgres-sql.js'
import { registerPetsChanged } from './pets-changed.js'
import { postgresOpenOrderFinder } from './open-orders.js'
import { countsOf, type PetCountRow, type PetCounts } from './pet-counts.js'

/**
 * The pets of the shared PostgreSQL database: creates grouped into one statement per event-loop turn,
 * the getPets of one turn read in one query (and its inventories in one), and a `LISTEN` for other instances' changes (list pages).
 */
export class PostgresPetStore implements PetStore {
  readonly #database: PostgresDatabase
  readonly #creates = groupCreates(async (items) => await this.#insertPets(items))
  readonly #petsById = new GroupRead<Int64, Pet>(async (ids) => await this.#findPets(ids), MAX_PETS_PER_READ)
  // the inventories asked for in one turn share one read, begun after each of them arrived
  readonly #counts = sharedPerTurn(async () => countsOf(await this.#database.query<PetCountRow>(SQL.countPets, [])))
  readonly #changes: ChangeListener
  readonly #clock: Clock

  constructor (database: PostgresDatabase, clock: Clock) {
    this.#database = database
    this.#clock = clock
    this.#changes = database.listen(PETS_CHANGED_CHANNEL)
    // an order's change of a pet, committed by the orders' store of this process (its NOTIFY reaches the others)
    registerPetsChanged(database, () => { this.#changes.bump() })
  }

  async createPet (pet: NewPetRecord, completing?: IdempotencyCompletion): Promise<Pet> {
    return await this.#creates.submit({ pet, completing })
  }

  // one transaction (one commit) for the batch. A claim found lost at completion rolls the batch
  // back, and it is written again without that pet: lost claims are rare (a lease ran out), and
  // no claim row is locked before the insert, so a takeover never waits behind a slow create
  async #insertPets (items: readonly PendingCreate[]): Promise<Array<ItemOutcome<Pet>>> {
    const lost = new Set<PendingCreate>()
    for (;;) {
      const kept = items.filter((item) => !lost.has(item))
      if (kept.length === 0) break
      let outcome: BatchInsert
      const now = new Date(this.#clock.now())
      try {
        // without claims to complete, one statement is the whole transaction: two round trips fewer
        outcome = kept.every((item) => item.completing === undefined)
          ? await this.#database.onPool(async (pool) => await insertBatch(this.#database, pool, kept, now))
          : await this.#database.transaction(async (client) => await insertBatch(this.#database, client, kept, now), (batch) => batch.lost.length > 0)
      } finally {
        // before any 201 goes out (and also when the commit's outcome is unknown): a list on this
        // instance right after it must not be served from a page read before
        this.#changes.bump()
      }
      if (outcome.lost.length === 0) {
        return items.map((item): ItemOutcome<Pet> => {
          const pet = outcome.created.get(item)
          return pet === undefined ? { ok: false, error: new IdempotencyClaimLostError() } : { ok: true, value: pet }
        })
      }
      for (const item of outcome.lost) lost.add(item)
    }
    return items.map(() => ({ ok: false, error: new IdempotencyClaimLostError() }))
  }

  async findPetById (id: Int64): Promise<Pet | undefined> {
    return await this.#petsById.get(id)
  }

  async #findPets (ids: readonly Int64[]): Promise<ReadonlyMap<Int64, Pet>> {
    const rows = ids.length === 1 ? await this.#database.query<PetRow>(SQL.findPet, [ids[0]]) : await this.#database.query<PetRow>(SQL.findPets, [ids])
    // a row's id is a number (ids stay below 2^53), as the id asked for is when it is that small
    return new Map(rows.map((row) => [row.id, rowToPet(row)]))
  }

  async updatePet (id: Int64, patch: PetPatch, precondition?: PetPrecondition): Promise<PetUpdateOutcome> {
    let wrote = false
    try {
      return await this.#database.transaction(async (client) => {
        const { rows } = await client.query<PetRow>({ ...SQL.findPetForUpdate, values: [id] })
        const current = rows[0] === undefined ? undefined : rowToPet(rows[0])
        const openOrderId = patch.status !== undefined && current !== undefined && patch.status !== current.status
          ? await postgresOpenOrderFinder(this.#database)(client, id)
          : undefined
        const outcome = decidePetUpdate(current, patch, precondition, () => openOrderId)
        if (outcome.outcome === 'updated' && petChanged(outcome.previous, outcome.pet)) {
          const { pet } = outcome
          wrote = true
          await SQL.updatePet.run(this.#database, client, [pet.name, pet.categoryId, pet.status, pet.id, new Date(this.#clock.now()), stringifyJson(petUpdatedData(outcome.previous, pet))])
        }
        return outcome
      })
    } finally {
      // before the 200 goes out (and also when the commit's outcome is unknown): as after a create
      if (wrote) this.#changes.bump()
    }
  }

  async listPets (query: PetPageQuery): Promise<PetPage> {
    const afterId = query.afterId ?? 0
    // one row more than asked tells whether a next page exists
    const rows = query.status === undefined
      ? await this.#database.query<PetRow>(SQL.listPets, [afterId, query.limit + 1])
      : await this.#database.query<PetRow>(SQL.listPetsByStatus, [query.status, afterId, query.limit + 1])
    return { pets: rows.slice(0, query.limit).map(rowToPet), hasMore: rows.length > query.limit }
  }

  async countPetsByStatus (): Promise<PetCounts> {
    return await this.#counts()
  }

  listVersion (): number | undefined {
    return this.#database.closed ? undefined : this.#changes.version()
  }
}
