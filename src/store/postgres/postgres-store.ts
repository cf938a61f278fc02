import pg from 'pg'
import { StoreUnavailableError } from '../../errors/catalogue.js'
import type { Pet } from '../../schemas/pet.js'
import { decideClaim, IdempotencyClaimLostError, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../../idempotency/claims.js'
import { ChangeListener } from './change-listener.js'
import { groupCreates, type ItemOutcome, type PendingCreate } from '../group-commit.js'
import { loadMigrations, SchemaTooNewError } from '../migrator.js'
import type { ApiKeyRecord, MigrationResult, NewPetRecord, PetPage, PetPageQuery, PetStore } from '../pet-store.js'
import { PET_COLUMNS, rowToPet, type PetRow } from '../rows.js'

interface ApiKeyRow {
  id: number
  name: string
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}

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

// Transaction-scoped advisory locks, one per purpose, keyed also by the schema so that
// two deployments sharing a database in different schemas never wait on each other
const LOCK_CLASS = 0x50530000 // "PS"
const LOCKS = { migrations: LOCK_CLASS + 1, petIds: LOCK_CLASS + 2, firstApiKey: LOCK_CLASS + 3 } as const
const lockSql = (purpose: number): string => `pg_advisory_xact_lock(${purpose}, hashtext(current_schema()))`

/** Notified (with the schema as payload) whenever pets are added. */
export const PETS_CHANGED_CHANNEL = 'petstore_pets_changed'

// the token too: an old holder and the new one of the same key may be in one batch, and only the new one completes
const claimKey = (claim: { scope: string, key: string, token: string }): string => `${claim.scope}\n${claim.key}\n${claim.token}`

interface BatchInsert {
  created: Map<PendingCreate, Pet>
  /** Items whose claim was no longer held: the transaction must be rolled back. */
  lost: PendingCreate[]
}

/** Inserts the pets of `kept` and completes their claims, inside the caller's transaction (if any claims). */
async function insertKept (client: pg.PoolClient | pg.Pool, kept: readonly PendingCreate[]): Promise<BatchInsert> {
  const { rows } = await client.query<PetRow>({
    ...SQL.insertPets,
    values: [kept.map((item) => item.pet.name), kept.map((item) => item.pet.categoryId), kept.map((item) => item.pet.status)]
  })
  // ids are drawn in input order, so the pets sorted by id line up with the input
  const pets = rows.map(rowToPet).sort((a, b) => a.id - b.id)
  if (pets.length !== kept.length) throw new Error(`inserted ${pets.length} pets for ${kept.length} creates`)
  const created = new Map<PendingCreate, Pet>(kept.map((item, index) => [item, pets[index] as Pet]))
  const completions = kept.filter((item) => item.completing !== undefined)
  if (completions.length === 0) return { created, lost: [] }
  const claims = completions.map((item) => item.completing as IdempotencyCompletion)
  const completed = await client.query<{ scope: string, key: string, token: string }>({
    ...SQL.completeIdempotencyKeys,
    values: [claims.map((c) => c.scope), claims.map((c) => c.key), claims.map((c) => c.token), completions.map((item) => JSON.stringify(created.get(item)))]
  })
  const done = new Set(completed.rows.map(claimKey))
  const lost = completions.filter((item) => !done.has(claimKey(item.completing as IdempotencyCompletion)))
  return { created, lost }
}

/** Longest a start-up migration step (or the wait for another instance's migration) may take. */
export const MIGRATION_TIMEOUT_MS = 5 * 60_000

const INT8_OID = 20

/** int8 as a number when exactly representable, else as a bigint: never a silently rounded value. */
export function parseInt8 (text: string): number | bigint {
  const number = Number(text)
  return Number.isSafeInteger(number) ? number : BigInt(text)
}

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => oid === INT8_OID && format !== 'binary'
    ? parseInt8
    : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser']
}

// SQLSTATE classes where the database, not the query, is at fault: the client may retry
// 08 connection, 53 resources, 57 operator intervention (incl. statement timeout), 40 rollbacks,
// 55P03 lock wait, 58 system error, 25006 read-only (a primary turned standby during a failover)
const UNAVAILABLE_SQLSTATE = /^(08|53|57|40|55P03|58|25006)/
// the driver's own failures: no connection, a timed-out connect or query, a closed pool
const UNAVAILABLE_DRIVER_MESSAGE = /timeout|Connection terminated|not queryable|Cannot use a pool after calling end/i

function isDatabaseError (error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError
}

/** Maps a driver or server failure to {@link StoreUnavailableError} when retrying may help; other errors pass through. */
export function toStoreError (error: unknown): unknown {
  if (isDatabaseError(error)) {
    return typeof error.code === 'string' && UNAVAILABLE_SQLSTATE.test(error.code)
      ? new StoreUnavailableError(`PostgreSQL is unavailable (${error.code}: ${error.message})`, { cause: error })
      : error
  }
  const code = (error as { code?: unknown } | undefined)?.code
  // network and name-resolution errors from node (ECONNREFUSED, ETIMEDOUT, ECONNRESET, EAI_AGAIN…)
  if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) {
    return new StoreUnavailableError(`PostgreSQL is unreachable (${code})`, { cause: error })
  }
  if (error instanceof Error && UNAVAILABLE_DRIVER_MESSAGE.test(error.message)) {
    return new StoreUnavailableError(`PostgreSQL is unavailable (${error.message})`, { cause: error })
  }
  return error
}

function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null
  }
}

const KEY_COLUMNS = 'id, name, created_at, last_used_at, revoked_at'

// Named statements are parsed once per connection, then only bound and executed
const SQL = {
  // Ids are drawn and committed in one order (the lock is held until commit), so a reader
  // never sees a pet whose id is above one still being inserted: keyset pages skip nothing
  insertPets: {
    name: 'petstore-insert-pets',
    text: `WITH ordered AS (SELECT ${lockSql(LOCKS.petIds)}), ` +
      // delivered at commit to every instance listening: their cached list pages are stale
      `notified AS (SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema())), ` +
      'input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, position)) ' +
      'INSERT INTO pets (name, category_id, status) SELECT input.name, input.category_id, input.status FROM input, ordered, notified ' +
      `ORDER BY input.position RETURNING ${PET_COLUMNS}`
  },
  completeIdempotencyKeys: {
    name: 'petstore-complete-idempotency-keys',
    text: 'UPDATE idempotency_keys AS k SET token = NULL, locked_until = NULL, response_status = 201, response_body = c.body ' +
      'FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(scope, key, token, body) ' +
      'WHERE k.scope = c.scope AND k.key = c.key AND k.token = c.token RETURNING c.scope, c.key, c.token'
  },
  findPet: { name: 'petstore-find-pet', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1` },
  listPets: { name: 'petstore-list-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2` },
  listPetsByStatus: {
    name: 'petstore-list-pets-by-status',
    text: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`
  },
  findActiveApiKey: {
    name: 'petstore-find-active-api-key',
    text: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`
  },
  insertIdempotencyKey: {
    name: 'petstore-insert-idempotency-key',
    text: 'INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES ($1, $2, $3, $4, $5, $6) ' +
      'ON CONFLICT (scope, key) DO NOTHING RETURNING 1 AS claimed'
  },
  touchApiKey: { name: 'petstore-touch-api-key', text: 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2' },
  ping: { name: 'petstore-ping', text: 'SELECT 1' }
} as const

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

  readonly #changes: ChangeListener
  #closed = false

  constructor (options: PostgresStoreOptions) {
    this.#options = options
    this.description = describe(options.url)
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.timeoutMs,
      // the server cancels a slow statement; the client-side timeout also covers a silent network
      statement_timeout: options.timeoutMs,
      query_timeout: options.timeoutMs,
      keepAlive: true,
      application_name: 'petstore',
      types
    })
    // an idle connection that the server or network drops emits here; unhandled, it would crash the process
    this.#pool.on('error', (error) => { options.onBackgroundError?.(error) })
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
          ? await insertKept(this.#pool, kept).catch((error: unknown) => { throw toStoreError(error) })
          : await this.#transaction(async (client) => await insertKept(client, kept), (batch) => batch.lost.length > 0)
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
        // times as ms since the epoch: the shape decideClaim reads on both engines
        const { rows } = await client.query<IdempotencyRow>(
          'SELECT fingerprint, token, (extract(epoch FROM locked_until) * 1000)::float8 AS "lockedUntilMs", ' +
          'response_status AS "responseStatus", response_body AS "responseBody", ' +
          '(extract(epoch FROM expires_at) * 1000)::float8 AS "expiresAtMs" FROM idempotency_keys ' +
          'WHERE scope = $1 AND key = $2 FOR UPDATE', [request.scope, request.key])
        const row = rows[0]
        if (row === undefined) return undefined
        const decision = decideClaim(row, request)
        if (decision.action === 'answer') return decision.claim
        await client.query('UPDATE idempotency_keys SET fingerprint = $1, token = $2, locked_until = $3, expires_at = $4, ' +
          'response_status = NULL, response_body = NULL WHERE scope = $5 AND key = $6', values)
        return { outcome: 'claimed' }
      })
      if (claim !== undefined) return claim
    }
    throw new StoreUnavailableError('the Idempotency-Key record kept changing; retry')
  }

  async releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void> {
    await this.#query({ text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3' }, [claim.scope, claim.key, claim.token])
  }

  async deleteExpiredIdempotencyKeys (now: Date): Promise<number> {
    const rows = await this.#query<{ deleted: number }>(
      { text: 'WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS deleted FROM gone' }, [now])
    return firstRow(rows).deleted
  }

  async findPetById (id: number): Promise<Pet | undefined> {
    const rows = await this.#query<PetRow>(SQL.findPet, [id])
    return rows[0] === undefined ? undefined : rowToPet(rows[0])
  }

  async listPets (query: PetPageQuery): Promise<PetPage> {
    const afterId = query.afterId ?? 0
    // one row more than asked tells whether a next page exists
    const rows = query.status === undefined
      ? await this.#query<PetRow>(SQL.listPets, [afterId, query.limit + 1])
      : await this.#query<PetRow>(SQL.listPetsByStatus, [query.status, afterId, query.limit + 1])
    return { pets: rows.slice(0, query.limit).map(rowToPet), hasMore: rows.length > query.limit }
  }

  async createApiKey (name: string, keyHash: string): Promise<ApiKeyRecord> {
    const rows = await this.#query<ApiKeyRow>(
      { text: `INSERT INTO api_keys (name, key_hash, created_at) VALUES ($1, $2, $3) RETURNING ${KEY_COLUMNS}` },
      [name, keyHash, new Date()])
    return rowToApiKey(firstRow(rows))
  }

  async createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.#transaction(async (client) => {
      // instances starting together queue here; each then sees the others' committed keys
      await client.query(`SELECT ${lockSql(LOCKS.firstApiKey)}`)
      const result = await client.query<ApiKeyRow>(
        `INSERT INTO api_keys (name, key_hash, created_at) SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${KEY_COLUMNS}`,
        [name, keyHash, new Date()])
      return result.rows[0] === undefined ? undefined : rowToApiKey(result.rows[0])
    })
  }

  async findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#query<ApiKeyRow>(SQL.findActiveApiKey, [keyHash])
    return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return (await this.#query<ApiKeyRow>({ text: `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id` }, [])).map(rowToApiKey)
  }

  async revokeApiKey (id: number): Promise<boolean> {
    const rows = await this.#query<{ id: number }>(
      { text: 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id' }, [new Date(), id])
    return rows.length === 1
  }

  async touchApiKey (id: number, usedAt: Date): Promise<void> {
    await this.#query(SQL.touchApiKey, [usedAt, id])
  }

  async ensureSetting (name: string, initialValue: string): Promise<string> {
    // two statements: the second one's snapshot sees a value another instance committed meanwhile
    await this.#query({ text: 'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING' }, [name, initialValue])
    return firstRow(await this.#query<{ value: string }>({ text: 'SELECT value FROM settings WHERE name = $1' }, [name])).value
  }

  async migrate (): Promise<MigrationResult> {
    // its own connection with a longer bound than a request's: a migration, or waiting for
    // another instance's, may take a while, but a silent network must not hang start-up forever
    const client = new pg.Client({
      connectionString: this.#options.url,
      connectionTimeoutMillis: this.#options.timeoutMs,
      // the server cancels a step (or the wait for the lock) that runs too long; the client-side
      // bound, a little later, only ends a wait on a network that went silent
      statement_timeout: MIGRATION_TIMEOUT_MS,
      query_timeout: MIGRATION_TIMEOUT_MS + 5_000,
      keepAlive: true,
      application_name: 'petstore-migrate',
      types
    })
    client.on('error', (error) => { this.#options.onBackgroundError?.(error) })
    try {
      await client.connect()
      const result = await migrateWith(client)
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

  async #query<R extends pg.QueryResultRow = Record<string, unknown>>(statement: { name?: string, text: string }, values: unknown[]): Promise<R[]> {
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

async function migrateWith (client: pg.Client): Promise<MigrationResult> {
  const migrations = loadMigrations('postgres')
  await client.query('BEGIN')
  try {
    const { rows } = await client.query<{ schema: string | null, encoding: string }>(
      "SELECT current_schema() AS schema, current_setting('server_encoding') AS encoding")
    if (rows[0]?.schema == null) throw new Error('the search_path names no schema that exists; create the schema first')
    // any other encoding cannot hold every name a client may send: those creates would fail
    if (rows[0].encoding !== 'UTF8') throw new Error(`the database encoding is ${rows[0].encoding}; petstore needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`)
    // every instance starting at once waits here; the first applies, the others then find nothing to do
    await client.query(`SELECT ${lockSql(LOCKS.migrations)}`)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const current = firstRow((await client.query<{ v: number }>('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations')).rows).v
    const latest = migrations.length
    if (current > latest) throw new SchemaTooNewError(current, latest)
    const applied: string[] = []
    for (const migration of migrations.slice(current)) {
      await client.query(migration.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
      applied.push(migration.name)
    }
    await client.query('COMMIT')
    return { version: Math.max(current, latest), applied }
  } catch (error) {
    // after a server-side error the session still answers; after a driver error it may not
    if (isDatabaseError(error) || error instanceof SchemaTooNewError) await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}

function firstRow<R> (rows: R[]): R {
  const row = rows[0]
  if (row === undefined) throw new Error('the statement returned no row')
  return row
}

/** The connection string without password or parameters (but with a chosen schema), for logs. */
function describe (url: string): string {
  const parsed = new URL(url)
  const user = parsed.username === '' ? '' : `${parsed.username}@`
  const schema = /search_path\s*=\s*([^\s,]+)/.exec(parsed.searchParams.get('options') ?? '')?.[1]
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${schema === undefined ? '' : ` (schema ${schema})`}`
}
