import { StoreUnavailableError } from '../../../infra/errors/catalogue.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { decideClaim, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyCompletion, type IdempotencyRow } from '../claims.js'
import type { IdempotencyStore } from './idempotency-store.js'

// times as ms since the epoch: the shape decideClaim reads on both engines
const ROW_COLUMNS = 'fingerprint, token, (extract(epoch FROM locked_until) * 1000)::float8 AS "lockedUntilMs", ' +
  'response_status AS "responseStatus", response_body AS "responseBody", (extract(epoch FROM expires_at) * 1000)::float8 AS "expiresAtMs"'

const SQL = {
  insertIdempotencyKey: {
    name: 'petstore-insert-idempotency-key',
    text: 'INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES ($1, $2, $3, $4, $5, $6) ' +
      'ON CONFLICT (scope, key) DO NOTHING RETURNING 1 AS claimed'
  },
  findIdempotencyKeyForUpdate: { text: `SELECT ${ROW_COLUMNS} FROM idempotency_keys WHERE scope = $1 AND key = $2 FOR UPDATE` },
  takeOverIdempotencyKey: {
    text: 'UPDATE idempotency_keys SET fingerprint = $1, token = $2, locked_until = $3, expires_at = $4, ' +
      'response_status = NULL, response_body = NULL WHERE scope = $5 AND key = $6'
  },
  releaseIdempotencyKey: { text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3' },
  deleteExpiredIdempotencyKeys: {
    text: 'WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS deleted FROM gone'
  }
} as const

/** The Idempotency-Key records of the shared PostgreSQL database. */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const now = request.now.getTime()
    const values = [request.fingerprint, request.token, new Date(now + request.leaseMs), new Date(now + request.ttlMs), request.scope, request.key]
    // a release can delete the row between a failed insert and the look; then insert again
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.#database.query(SQL.insertIdempotencyKey, values)).length === 1) return { outcome: 'claimed' }
      const claim = await this.#database.transaction(async (client): Promise<IdempotencyClaim | undefined> => {
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
    await this.#database.query(SQL.releaseIdempotencyKey, [claim.scope, claim.key, claim.token])
  }

  async deleteExpiredIdempotencyKeys (now: Date): Promise<number> {
    const rows = await this.#database.query<{ deleted: number }>(SQL.deleteExpiredIdempotencyKeys, [now])
    return rows[0]?.deleted ?? 0
  }
}
