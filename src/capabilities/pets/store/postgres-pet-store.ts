import pg from 'pg'
import { DEFAULT_API_KEY_ROLE, type ApiKeyRole } from '../../keys/roles.js'
import { StoreUnavailableError } from '../../../infra/errors/catalogue.js'
import { decideClaim, IdempotencyClaimLostError, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../../idempotency/claims.js'
import { decidePetUpdate, petChanged, type PetPrecondition, type PetUpdateOutcome } from '../pet-update.js'
import { petUpdatedData } from '../pet-events.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Pet, PetPatch } from '../pet-schemas.js'
import type { EventStore } from '../../events/store/event-store.js'
import { groupCreates, type ItemOutcome, type PendingCreate } from '../../../infra/database/group-commit.js'
import { GroupRead } from '../../../infra/database/group-read.js'
import type { ApiKeyRecord, MigrationResult, NewPetRecord, PetPage, PetPageQuery, PetStore } from './pet-store.js'
import { rowToApiKey, rowToPet, type ApiKeyRow, type PetRow } from './rows.js'
import type { WebhookStore } from '../../webhooks/store/webhook-store.js'
import { insertBatch, type BatchInsert } from './postgres-batch-insert.js'
import { ChangeListener } from '../../../infra/database/postgres/change-listener.js'
import { PostgresEventStore, type RunQuery } from '../../events/store/postgres-event-store.js'
import { PostgresWebhookStore } from '../../webhooks/store/postgres-webhook-store.js'
import { describePostgres } from '../../../infra/database/postgres/connection.js'
import { toStoreError } from '../../../infra/database/postgres/errors.js'
import { PG_TYPES } from '../../../infra/database/postgres/int8.js'
import { migratePostgres, migrationClient } from '../../../infra/database/postgres/migrations.js'
import { LOCKS, lockSql, PETS_CHANGED_CHANNEL, SQL, type Statement } from './postgres-sql.js'

// a bound on one read of pets by id; a page holds at most 100, a burst of getPets rarely more
const MAX_PETS_PER_READ = 100

export interface PostgresStoreOptions {
  /** A libpq-style connection string (`postgres://…`); `options=-c search_path=…` selects a schema. */
  url: string
  /** Most connections this instance opens. */
  poolSize: number
  /** Longest wait for a connection, and separately for one query, before the store gives up. */
  timeoutMs: number
  /** Told about failures outside any call, e.g. an idle connection the server dropped. */
  onBackgroundError?: (error: Error) => void
}

/**
 * The shared store for several instances: one PostgreSQL database (or schema), reached
 * through a bounded pool. A call that cannot get a connection, or whose query does not
 * finish, within `timeoutMs` fails with {@link StoreUnavailableError} (a 503), and the pool
 * opens fresh connections once the server is back.
 */
export class PostgresPetStore implements PetStore {
  readonly description: string
  readonly #options: PostgresStoreOptions
  readonly #pool: pg.Pool
  readonly #creates = groupCreates(async (items) => await this.#insertPets(items))
  readonly #petsById = new GroupRead<Int64, Pet>(async (ids) => await this.#findPets(ids), MAX_PETS_PER_READ)

  readonly #changes: ChangeListener
  #closed = false
  /** The change feed, on this store's pool: its events are written by this store's own transactions. */
  readonly events: EventStore
  /** The webhook endpoints and their queue, on this store's pool. */
  readonly webhooks: WebhookStore

  constructor (options: PostgresStoreOptions) {
    this.#options = options
    this.description = describePostgres(options.url)
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.timeoutMs,
      // the server cancels a slow statement; the client-side timeout also covers a silent network
      statement_timeout: options.timeoutMs,
      query_timeout: options.timeoutMs,
      keepAlive: true,
      application_name: 'petstore',
      types: PG_TYPES
    })
    // an idle connection that the server or network drops emits here; unhandled, it would crash the process
    this.#pool.on('error', (error) => { options.onBackgroundError?.(error) })
    const query: RunQuery = async <R extends pg.QueryResultRow>(statement: Statement, values: unknown[]) => await this.#query<R>(statement, values)
    this.events = new PostgresEventStore(query)
    this.webhooks = new PostgresWebhookStore(query)
    this.#changes = new ChangeListener({
      url: options.url,
      channel: PETS_CHANGED_CHANNEL,
      timeoutMs: options.timeoutMs,
      ...(options.onBackgroundError === undefined ? {} : { onBackgroundError: options.onBackgroundError })
    })
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
      try {
        // without claims to complete, one statement is the whole transaction: two round trips fewer
        outcome = kept.every((item) => item.completing === undefined)
          ? await insertBatch(this.#pool, kept).catch((error: unknown) => { throw toStoreError(error) })
          : await this.#transaction(async (client) => await insertBatch(client, kept), (batch) => batch.lost.length > 0)
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

  async claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const now = request.now.getTime()
    const values = [request.fingerprint, request.token, new Date(now + request.leaseMs), new Date(now + request.ttlMs), request.scope, request.key]
    // a release can delete the row between a failed insert and the look; then insert again
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.#query(SQL.insertIdempotencyKey, values)).length === 1) return { outcome: 'claimed' }
      const claim = await this.#transaction(async (client): Promise<IdempotencyClaim | undefined> => {
        const { rows } = await client.query<IdempotencyRow>({ ...SQL.findIdempotencyKeyForUpdate, values: [request.scope, request.key] })
        const row = rows[0]
        if (row === undefined) return undefined
        const decision = decideClaim(row, request)
        if (decision.action === 'answer') return decision.claim
        await client.query({ ...SQL.takeOverIdempotencyKey, values })
        return { outcome: 'claimed' }
      })
      if (claim !== undefined) return claim
    }
    throw new StoreUnavailableError('the Idempotency-Key record kept changing; retry')
  }

  async releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void> {
    await this.#query(SQL.releaseIdempotencyKey, [claim.scope, claim.key, claim.token])
  }

  async deleteExpiredIdempotencyKeys (now: Date): Promise<number> {
    const rows = await this.#query<{ deleted: number }>(SQL.deleteExpiredIdempotencyKeys, [now])
    return firstRow(rows).deleted
  }

  async findPetById (id: Int64): Promise<Pet | undefined> {
    return await this.#petsById.get(id)
  }

  async #findPets (ids: readonly Int64[]): Promise<ReadonlyMap<Int64, Pet>> {
    const rows = ids.length === 1 ? await this.#query<PetRow>(SQL.findPet, [ids[0]]) : await this.#query<PetRow>(SQL.findPets, [ids])
    // a row's id is a number (ids stay below 2^53), as the id asked for is when it is that small
    return new Map(rows.map((row) => [row.id, rowToPet(row)]))
  }

  async updatePet (id: Int64, patch: PetPatch, precondition?: PetPrecondition): Promise<PetUpdateOutcome> {
    let wrote = false
    try {
      return await this.#transaction(async (client) => {
        const { rows } = await client.query<PetRow>({ ...SQL.findPetForUpdate, values: [id] })
        const outcome = decidePetUpdate(rows[0] === undefined ? undefined : rowToPet(rows[0]), patch, precondition)
        if (outcome.outcome === 'updated' && petChanged(outcome.previous, outcome.pet)) {
          const { pet } = outcome
          wrote = true
          await client.query({ ...SQL.updatePet, values: [pet.name, pet.categoryId, pet.status, pet.id, new Date(), stringifyJson(petUpdatedData(outcome.previous, pet))] })
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
      ? await this.#query<PetRow>(SQL.listPets, [afterId, query.limit + 1])
      : await this.#query<PetRow>(SQL.listPetsByStatus, [query.status, afterId, query.limit + 1])
    return { pets: rows.slice(0, query.limit).map(rowToPet), hasMore: rows.length > query.limit }
  }

  async createApiKey (name: string, keyHash: string, role: ApiKeyRole = DEFAULT_API_KEY_ROLE): Promise<ApiKeyRecord> {
    const rows = await this.#query<ApiKeyRow>(SQL.insertApiKey, [name, keyHash, role, new Date()])
    return rowToApiKey(firstRow(rows))
  }

  async createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.#transaction(async (client) => {
      // instances starting together queue here; each then sees the others' committed keys
      await client.query(`SELECT ${lockSql(LOCKS.firstApiKey)}`)
      const result = await client.query<ApiKeyRow>({ ...SQL.insertFirstApiKey, values: [name, keyHash, new Date()] })
      return result.rows[0] === undefined ? undefined : rowToApiKey(result.rows[0])
    })
  }

  async findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#query<ApiKeyRow>(SQL.findActiveApiKey, [keyHash])
    return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return (await this.#query<ApiKeyRow>(SQL.listApiKeys, [])).map(rowToApiKey)
  }

  async revokeApiKey (id: number): Promise<boolean> {
    const rows = await this.#query<{ id: number }>(SQL.revokeApiKey, [new Date(), id])
    return rows.length === 1
  }

  async touchApiKey (id: number, usedAt: Date): Promise<void> {
    await this.#query(SQL.touchApiKey, [usedAt, id])
  }

  async ensureSetting (name: string, initialValue: string): Promise<string> {
    // two statements: the second one's snapshot sees a value another instance committed meanwhile
    await this.#query(SQL.insertSetting, [name, initialValue])
    return firstRow(await this.#query<{ value: string }>(SQL.findSetting, [name])).value
  }

  async migrate (): Promise<MigrationResult> {
    const client = migrationClient(this.#options.url, this.#options.timeoutMs)
    client.on('error', (error) => { this.#options.onBackgroundError?.(error) })
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
    await this.#query(SQL.ping, [])
  }

  listVersion (): number | undefined {
    return this.#closed ? undefined : this.#changes.version()
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#changes.close()
    await this.#pool.end()
  }

  async #query<R extends pg.QueryResultRow = Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> {
    try {
      return (await this.#pool.query<R>({ ...statement, values })).rows
    } catch (error) {
      throw toStoreError(error)
    }
  }

  /** Runs `work` in a transaction; it is rolled back instead of committed when `rollBack(result)` is true. */
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>, rollBack?: (result: T) => boolean): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error)
    }
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query(rollBack?.(result) === true ? 'ROLLBACK' : 'COMMIT')
      client.release()
      return result
    } catch (error) {
      // a connection in an unknown state is not given back to the pool
      client.release(error instanceof Error ? error : true)
      throw toStoreError(error)
    }
  }
}

function firstRow<R> (rows: R[]): R {
  const row = rows[0]
  if (row === undefined) throw new Error('the statement returned no row')
  return row
}
