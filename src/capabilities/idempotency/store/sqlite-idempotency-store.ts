import type BetterSqlite3 from 'better-sqlite3'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { decideClaim, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../claims.js'
import type { IdempotencyStore } from './idempotency-store.js'

// an idempotency_keys row in the shape decideClaim reads (times are stored as ms already)
const ROW_COLUMNS = 'fingerprint, token, locked_until AS lockedUntilMs, response_status AS responseStatus, ' +
  'response_body AS responseBody, expires_at AS expiresAtMs'

const SQL = {
  findIdempotencyKey: `SELECT ${ROW_COLUMNS} FROM idempotency_keys WHERE scope = ? AND key = ?`,
  insertIdempotencyKey: 'INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES (?, ?, ?, ?, ?, ?)',
  takeOverIdempotencyKey: 'UPDATE idempotency_keys SET fingerprint = ?, token = ?, locked_until = ?, expires_at = ?, response_status = NULL, response_body = NULL WHERE scope = ? AND key = ?',
  releaseIdempotencyKey: 'DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND token = ?',
  deleteExpiredIdempotencyKeys: 'DELETE FROM idempotency_keys WHERE expires_at <= ?'
} as const

/** The Idempotency-Key records of the embedded database. */
export class SqliteIdempotencyStore implements IdempotencyStore {
  readonly #database: SqliteDatabase
  readonly #statements: () => PreparedStatements<keyof typeof SQL>
  #claimPrepared: BetterSqlite3.Transaction<(request: IdempotencyClaimRequest) => IdempotencyClaim> | undefined

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL)
  }

  // the look and the write under one write lock (run IMMEDIATE), so two claims cannot both win; made once
  get #claim (): BetterSqlite3.Transaction<(request: IdempotencyClaimRequest) => IdempotencyClaim> {
    this.#claimPrepared ??= this.#database.connection.transaction((request: IdempotencyClaimRequest): IdempotencyClaim => {
      const statements = this.#statements()
      const now = request.now.getTime()
      const values = [request.fingerprint, request.token, now + request.leaseMs, now + request.ttlMs, request.scope, request.key]
      const row = statements.findIdempotencyKey.get(request.scope, request.key) as IdempotencyRow | undefined
      if (row === undefined) {
        statements.insertIdempotencyKey.run(...values)
        return { outcome: 'claimed' }
      }
      const decision = decideClaim(row, request)
      if (decision.action === 'answer') return decision.claim
      statements.takeOverIdempotencyKey.run(...values)
      return { outcome: 'claimed' }
    })
    return this.#claimPrepared
  }

  async claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    return this.#database.run(() => this.#claim.immediate(request))
  }

  async releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void> {
    this.#database.run(() => this.#statements().releaseIdempotencyKey.run(claim.scope, claim.key, claim.token))
  }

  async deleteExpiredIdempotencyKeys (now: Date): Promise<number> {
    return this.#database.run(() => this.#statements().deleteExpiredIdempotencyKeys.run(now.getTime()).changes)
  }
}
