import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { SQLITE_BUSY_TIMEOUT_MS } from '../../config.js'
import { StoreUnavailableError } from '../../errors/catalogue.js'
import type { Pet } from '../../schemas/pet.js'
import { decideClaim, IdempotencyClaimLostError, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../../idempotency/claims.js'
import { groupCreates, type ItemOutcome, type PendingCreate } from '../group-commit.js'
import { loadMigrations, SchemaTooNewError } from '../migrator.js'
import type { ApiKeyRecord, MigrationResult, NewPetRecord, PetPage, PetPageQuery, PetStore } from '../pet-store.js'
import { PET_COLUMNS, rowToPet, type PetRow } from '../rows.js'

interface ApiKeyRow {
  id: number
  name: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

// how long a start-up migration waits for another process's
const SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 30_000

// failures of the engine or the disk rather than of the query: the client may retry
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|NOMEM|READONLY|PROTOCOL)/

function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return { id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at }
}

/** Where a {@link SqlitePetStore} keeps its data: a file, or memory for throw-away runs. */
export type SqliteLocation = { path: string } | { memory: true }

/**
 * The embedded store: one SQLite file in WAL mode with `synchronous=FULL`,
 * so a committed insert has been fsync'd before the call returns.
 */
export class SqlitePetStore implements PetStore {
  readonly description: string
  readonly #db: Database.Database
  #prepared: ReturnType<typeof prepareStatements> | undefined
  // bumped by this connection's own commits of pets, and when another connection committed anything
  #listVersion = 0
  #dataVersion: number | undefined
  readonly #creates = groupCreates((items) => this.#run(() => this.#insertBatch.immediate(items)))
  #insertBatchPrepared: Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> | undefined

  constructor (location: SqliteLocation) {
    if ('path' in location) {
      mkdirSync(dirname(location.path), { recursive: true })
      this.description = `sqlite:${location.path}`
      this.#db = new Database(location.path)
    } else {
      this.description = 'sqlite::memory:'
      this.#db = new Database(':memory:')
    }
    this.#db.pragma('journal_mode = WAL')
    this.#db.pragma('synchronous = FULL')
    this.#db.pragma('foreign_keys = ON')
    // the CLI and the server may write the same file at once; a wait blocks the event loop,
    // so it is short, and a longer lock becomes a 503 the client can retry
    this.#db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  }

  // prepared on first use, because preparing needs the tables that migrate() creates
  get #statements (): ReturnType<typeof prepareStatements> {
    this.#prepared ??= prepareStatements(this.#db)
    return this.#prepared
  }

  async createPet (pet: NewPetRecord, completing?: IdempotencyCompletion): Promise<Pet> {
    return await this.#creates.submit({ pet, completing })
  }

  // one IMMEDIATE transaction, one fsync, for the whole batch; each pet with its claim's completion
  // in a savepoint of its own, so a lost claim drops only that pet. Made once, on first use
  get #insertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    this.#insertBatchPrepared ??= this.#prepareInsertBatch()
    return this.#insertBatchPrepared
  }

  #prepareInsertBatch (): Database.Transaction<(items: readonly PendingCreate[]) => Array<ItemOutcome<Pet>>> {
    const statements = this.#statements
    const insertOne = this.#db.transaction(({ pet, completing }: PendingCreate): Pet => {
      const created = rowToPet(statements.insertPet.get(pet.name, pet.categoryId, pet.status) as PetRow)
      if (completing !== undefined) {
        const { changes } = statements.completeIdempotencyKey.run(201, JSON.stringify(created), completing.scope, completing.key, completing.token)
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

  async findPetById (id: number): Promise<Pet | undefined> {
    return this.#run(() => {
      const row = this.#statements.findPet.get(id) as PetRow | undefined
      return row === undefined ? undefined : rowToPet(row)
    })
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

  async createApiKey (name: string, keyHash: string): Promise<ApiKeyRecord> {
    return this.#run(() => rowToApiKey(this.#statements.insertApiKey.get(name, keyHash, new Date().toISOString()) as ApiKeyRow))
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
    return this.#run(() => this.#migrateNow())
  }

  async ping (): Promise<void> {
    this.#run(() => this.#statements.ping.get())
  }

  /** The connection's `synchronous` setting, as a name (for tests of durability). */
  synchronousMode (): string {
    return ['off', 'normal', 'full', 'extra'][this.#db.pragma('synchronous', { simple: true }) as number] ?? 'unknown'
  }

  /** SQLite's plan for the list query, with or without a status filter (for tests that pages never sort). */
  explainListPets (filtered: boolean): string {
    const statement = filtered ? this.#statements.listPetsByStatus : this.#statements.listPets
    const args = filtered ? ['available', 0, 21] : [0, 21]
    return (this.#db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...args) as Array<{ detail: string }>)
      .map((row) => row.detail).join('; ')
  }

  async close (): Promise<void> {
    if (this.#db.open) this.#db.close()
  }

  #migrateNow (): MigrationResult {
    const migrations = loadMigrations('sqlite')
    this.#db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`)
    // IMMEDIATE takes the write lock first, so two processes cannot apply the same migration
    const apply = this.#db.transaction((): MigrationResult => {
      const current = (this.#db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v
      const latest = migrations.length
      if (current > latest) throw new SchemaTooNewError(current, latest)
      const applied: string[] = []
      for (const migration of migrations.slice(current)) {
        this.#db.exec(migration.sql)
        this.#db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString())
        applied.push(migration.name)
      }
      return { version: Math.max(current, latest), applied }
    })
    // several processes may start at once (WORKERS, a rolling restart): waiting for another's
    // migration is expected here, unlike for a request
    this.#db.pragma(`busy_timeout = ${SQLITE_MIGRATION_BUSY_TIMEOUT_MS}`)
    try {
      return apply.immediate()
    } finally {
      this.#db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
    }
  }

  #run<T>(operation: () => T): T {
    try {
      return operation()
    } catch (error) {
      throw toStoreError(error, this.#db.open)
    }
  }
}

function toStoreError (error: unknown, open: boolean): unknown {
  const code = (error as { code?: unknown }).code
  if (!open) return new StoreUnavailableError('the SQLite database is closed', { cause: error })
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`SQLite is unavailable (${code})`, { cause: error })
  }
  return error
}

// an idempotency_keys row in the shape decideClaim reads (times are stored as ms already)
const IDEMPOTENCY_ROW_COLUMNS = 'fingerprint, token, locked_until AS lockedUntilMs, response_status AS responseStatus, ' +
  'response_body AS responseBody, expires_at AS expiresAtMs'

// the inferred return type names every statement
function prepareStatements (db: Database.Database) {
  return {
    insertPet: db.prepare(`INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`),
    findPet: db.prepare(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`),
    listPets: db.prepare(`SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`),
    listPetsByStatus: db.prepare(`SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`),
    insertApiKey: db.prepare('INSERT INTO api_keys (name, key_hash, created_at) VALUES (?, ?, ?) RETURNING id, name, created_at, last_used_at, revoked_at'),
    findActiveApiKey: db.prepare('SELECT id, name, created_at, last_used_at, revoked_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL'),
    listApiKeys: db.prepare('SELECT id, name, created_at, last_used_at, revoked_at FROM api_keys ORDER BY id'),
    revokeApiKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    touchApiKey: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    insertFirstApiKey: db.prepare('INSERT INTO api_keys (name, key_hash, created_at) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING id, name, created_at, last_used_at, revoked_at'),
    insertSetting: db.prepare('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING'),
    findSetting: db.prepare('SELECT value FROM settings WHERE name = ?'),
    findIdempotencyKey: db.prepare(`SELECT ${IDEMPOTENCY_ROW_COLUMNS} FROM idempotency_keys WHERE scope = ? AND key = ?`),
    insertIdempotencyKey: db.prepare('INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES (?, ?, ?, ?, ?, ?)'),
    takeOverIdempotencyKey: db.prepare('UPDATE idempotency_keys SET fingerprint = ?, token = ?, locked_until = ?, expires_at = ?, response_status = NULL, response_body = NULL WHERE scope = ? AND key = ?'),
    completeIdempotencyKey: db.prepare('UPDATE idempotency_keys SET token = NULL, locked_until = NULL, response_status = ?, response_body = ? WHERE scope = ? AND key = ? AND token = ?'),
    releaseIdempotencyKey: db.prepare('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND token = ?'),
    deleteExpiredIdempotencyKeys: db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?'),
    ping: db.prepare('SELECT 1'),
    dataVersion: db.prepare('PRAGMA data_version').pluck()
  }
}
