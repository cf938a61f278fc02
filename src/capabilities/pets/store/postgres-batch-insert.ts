import type pg from 'pg'
import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Pet } from '../pet-schemas.js'
import type { PendingCreate } from './pending-create.js'
import { rowToPet, type PetRow } from './rows.js'
import { SQL } from './postgres-sql.js'

// the token too: an old holder and the new one of the same key may be in one batch, and only the new one completes
const claimIdentity = (claim: { scope: string, key: string, token: string }): string => `${claim.scope}\n${claim.key}\n${claim.token}`

export interface BatchInsert {
  created: Map<PendingCreate, Pet>
  /** Items whose claim was no longer held: the transaction must be rolled back. */
  lost: PendingCreate[]
}

/**
 * Inserts the pets of one group commit, with their pet.created events (occurred at `now`), in one statement and completes their
 * Idempotency-Key claims, inside the caller's transaction (when there are claims to complete; else the statement is its own).
 */
export async function insertBatch (database: PostgresDatabase, client: pg.PoolClient | pg.Pool, kept: readonly PendingCreate[], now: Date): Promise<BatchInsert> {
  const rows = await SQL.insertPets.run<PetRow>(database, client,
    [kept.map((item) => item.pet.name), kept.map((item) => item.pet.categoryId), kept.map((item) => item.pet.status), now])
  // ids are drawn in input order, so the pets sorted by id line up with the input
  const pets = rows.map(rowToPet).sort((a, b) => a.id - b.id)
  if (pets.length !== kept.length) throw new Error(`inserted ${pets.length} pets for ${kept.length} creates`)
  const created = new Map<PendingCreate, Pet>(kept.map((item, index) => [item, pets[index] as Pet]))
  const completions = kept.filter((item) => item.completing !== undefined)
  if (completions.length === 0) return { created, lost: [] }
  const claims = completions.map((item) => item.completing as IdempotencyCompletion)
  const completed = await client.query<{ scope: string, key: string, token: string }>({
    ...SQL.completeIdempotencyKeys,
    values: [claims.map((c) => c.scope), claims.map((c) => c.key), claims.map((c) => c.token), completions.map((item) => stringifyJson(created.get(item)))]
  })
  const done = new Set(completed.rows.map(claimIdentity))
  const lost = completions.filter((item) => !done.has(claimIdentity(item.completing as IdempotencyCompletion)))
  return { created, lost }
}
