import type Database from 'better-sqlite3'
import { DEFAULT_API_KEY_ROLE, type ApiKeyRole } from '../../keys/roles.js'
import { decideClaim, IdempotencyClaimLostError, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../../idempotency/claims.js'
import { decidePetUpdate, petChanged, type PetPrecondition, type PetUpdateOutcome } from '../pet-update.js'
import { petCreatedData, petUpdatedData } from '../pet-events.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Pet, PetPatch } from '../pet-schemas.js'
import type { EventStore } from '../../events/store/event-store.js'
import { groupCreates, type ItemOutcome, type PendingCreate } from '../../../infra/database/group-commit.js'
import type { ApiKeyRecord, MigrationResult, NewPetRecord, PetPage, PetPageQuery, PetStore } from './pet-store.js'
import { rowToApiKey, rowToPet, type ApiKeyRow, type PetRow } from './rows.js'
import type { WebhookStore } from '../../webhooks/store/webhook-store.js'
import { describeSqlite, openSqliteDatabase, type SqliteLocation } from '../../../infra/database/sqlite/connection.js'
import { toStoreError } from '../../../infra/database/sqlite/errors.js'
import { prepareStatements, type SqliteStatements } from './sqlite-sql.js'
import { SqliteEventStore } from '../../events/store/sqlite-event-store.js'
import { migrateSqlite } from '../../../infra/database/sqlite/migrations.js'
import { SqliteWebhookStore } from '../../webhooks/store/sqlite-webhook-store.js'

/**
 * The embedded store: one SQLite file in WAL mode with `synchronous=FULL`,
 * so a committed insert has been fsync'd before the call returns.
 */
export class SqlitePetStore implements PetStore {
  readonly description: string
  readonly #db: Database.Database
  #prepared: SqliteStatements | undefined
  // bumped by this connection's own commits of pets, and when another connection committed anything
  #listVersion = 0
  #dataVersion: number | undefined
  readonly #creates = groupCreates((items) => this.#run(() => this.#insertBatch.immediate(items)))
  #insertBatchPrepared: Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> | undefined

  /** The change feed, on this store's connection: its events are written by this store's own transactions. */
  readonly events: EventStore
  /** The webhook endpoints and their queue, on this store's connection. */
  readonly webhooks: WebhookStore

  constructor (location: SqliteLocation) {
    this.description = describeSqlite(location)
    this.#db = openSqliteDatabase(location)
    this.events = new SqliteEventStore(this.#db)
    this.webhooks = new SqliteWebhookStore(this.#db)
  }

  // prepared on first use, because preparing needs the tables that migrate() creates
  get #statements (): SqliteStatements {
    this.#prepared ??= prepareStatements(this.#db)
    return this.#prepared
  }

  async createPet (pet: NewPetRecord, completing?: IdempotencyCompletion): Promise<Pet> {
    return await this.#creates.submit({ pet, completing })
  }

  // one IMMEDIATE transaction, one fsync, for the whole batch; each pet with its event and its claim's
  // completion in a savepoint of its own, so a lost claim drops only that pet. Made once, on first use
  get #insertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    this.#insertBatchPrepared ??= this.#prepareInsertBatch()
    return this.#insertBatchPrepared
  }

  #prepareInsertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    const statements = this.#statements
    const insertOne = this.#db.transaction(({ pet, completing }: PendingCreate): Pet => {
      const created = rowToPet(statements.insertPet.get(pet.name, pet.categoryId, pet.status) as PetRow)
      statements.insertEvent.run('pet.created', Date.now(), stringifyJson(petCreatedData(created)))
      if (completing !== undefined) {
        const { changes } = statements.completeIdempotencyKey.run(201, stringifyJson(created), completing.scope, completing.key, completing.token)
        if (changes !== 1) throw new IdempotencyClaimLostError()
      }
      return created
    })
    return this.#db.transaction((items: readonly PendingCreate[]) => {
      // whatever the outcome, pets may have changed: pages read before must not be reused
      this.#listVersion++
      return items.map((item): ItemOutcome<Pet> => {
        try {
          return { ok: true, value: insertOne(item) }
        } catch (error) {
          // any other failure is the engine's: the whole batch rolls back
          if (error instanceof IdempotencyClaimLostError) return { ok: false, error }
          throw error
        }
      })
    })
  }

  listVersion (): number | undefined {
    if (!this.#db.open) return undefined
    // SQLite's data_version changes when another connection (a worker, the CLI) has committed
    const dataVersion = this.#statements.dataVersion.get() as number
    if (dataVersion !== this.#dataVersion) {
      this.#dataVersion = dataVersion
      this.#listVersion++
    }
    return this.#listVersion
  }

  async claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const now = request.now.getTime()
    const values = [request.fingerprint, request.token, now + request.leaseMs, now + request.ttlMs, request.scope, request.key]
    // IMMEDIATE: the look and the write happen under one write lock, so two claims cannot both win
    const claim = this.#db.transaction((): IdempotencyClaim => {
      const row = this.#statements.findIdempotencyKey.get(request.scope, request.key) as IdempotencyRow | undefined
      if (row === undefined) {
        this.#statements.insertIdempotencyKey.run(...values)
        return { outcome: 'claimed' }
      }
      const decision = decideClaim(row, request)
      if (decision.action === 'answer') return decision.claim
      this.#statements.takeOverIdempotencyKey.run(...values)
      return { outcome: 'claimed' }
    })
    return this.#run(() => claim.immediate())
  }

  async releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void> {
    this.#run(() => this.#statements.releaseIdempotencyKey.run(claim.scope, claim.key, claim.token))
  }

  async deleteExpiredIdempotencyKeys (now: Date): Promise<number> {
    return this.#run(() => this.#statements.deleteExpiredIdempotencyKeys.run(now.getTime()).changes)
  }

  async findPetById (id: Int64): Promise<Pet | undefined> {
    return this.#run(() => {
      const row = this.#statements.findPet.get(id) as PetRow | undefined
      return row === undefined ? undefined : rowToPet(row)
    })
  }

  async updatePet (id: Int64, patch: PetPatch, precondition?: PetPrecondition): Promise<PetUpdateOutcome> {
    // IMMEDIATE: the read, the checks and the write happen under one write lock (across processes too)
    const update = this.#db.transaction((): PetUpdateOutcome => {
      const row = this.#statements.findPet.get(id) as PetRow | undefined
      const outcome = decidePetUpdate(row === undefined ? undefined : rowToPet(row), patch, precondition)
      if (outcome.outcome === 'updated' && petChanged(outcome.previous, outcome.pet)) {
        const { pet } = outcome
        this.#statements.updatePet.run(pet.name, pet.categoryId, pet.status, pet.id)
        this.#statements.insertEvent.run('pet.updated', Date.now(), stringifyJson(petUpdatedData(outcome.previous, pet)))
        // pages read before must not be reused (this connection's own commits leave data_version alone)
        this.#listVersion++
      }
      return outcome
    })
    return this.#run(() => update.immediate())
  }

  async listPets (query: PetPageQuery): Promise<PetPage> {
    return this.#run(() => {
      const afterId = query.afterId ?? 0
      // one row more than asked tells whether a next page exists
      const rows = (query.status === undefined
        ? this.#statements.listPets.all(afterId, query.limit + 1)
        : this.#statements.listPetsByStatus.all(query.status, afterId, query.limit + 1)) as PetRow[]
      const hasMore = rows.length > query.limit
      return { pets: rows.slice(0, query.limit).map(rowToPet), hasMore }
    })
  }

  async createApiKey (name: string, keyHash: string, role: ApiKeyRole = DEFAULT_API_KEY_ROLE): Promise<ApiKeyRecord> {
    return this.#run(() => rowToApiKey(this.#statements.insertApiKey.get(name, keyHash, role, new Date().toISOString()) as ApiKeyRow))
  }

  async findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.#run(() => {
      const row = this.#statements.findActiveApiKey.get(keyHash) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
    })
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return this.#run(() => (this.#statements.listApiKeys.all() as ApiKeyRow[]).map(rowToApiKey))
  }

  async revokeApiKey (id: number): Promise<boolean> {
    return this.#run(() => this.#statements.revokeApiKey.run(new Date().toISOString(), id).changes === 1)
  }

  async touchApiKey (id: number, usedAt: Date): Promise<void> {
    this.#run(() => this.#statements.touchApiKey.run(usedAt.toISOString(), id))
  }

  async createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    // one statement holds SQLite's write lock from the check to the insert
    return this.#run(() => {
      const row = this.#statements.insertFirstApiKey.get(name, keyHash, new Date().toISOString()) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
    })
  }

  async ensureSetting (name: string, initialValue: string): Promise<string> {
    return this.#run(() => {
      this.#statements.insertSetting.run(name, initialValue)
      return (this.#statements.findSetting.get(name) as { value: string }).value
    })
  }

  async migrate (): Promise<MigrationResult> {
    return this.#run(() => migrateSqlite(this.#db))
  }

  async ping (): Promise<void> {
    this.#run(() => this.#statements.ping.get())
  }

  async close (): Promise<void> {
    if (this.#db.open) this.#db.close()
  }

  #run<T>(operation: () => T): T {
    try {
      return operation()
    } catch (error) {
      throw toStoreError(error, this.#db.open)
    }
  }
}
