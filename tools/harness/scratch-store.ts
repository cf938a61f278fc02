import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { withPostgres, withSearchPath } from './postgres.js'

/** The service's store engines. */
export type StoreKind = 'sqlite' | 'postgres'

/** A store nothing else uses, and how to remove it. */
export interface ScratchStore {
  /** Its DATABASE_URL. */
  url: string
  drop: () => Promise<void>
}

/**
 * A new SQLite file in a new temporary directory, or a new schema `petstore_<purpose>_<hex>` on
 * the PostgreSQL server `serverUrl`: for tests, and for the fuzz, soak and bench runners.
 */
export async function scratchStore (kind: StoreKind, purpose: string, serverUrl?: string): Promise<ScratchStore> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), `petstore-${purpose}-`))
    return { url: `sqlite:${join(dir, 'petstore.db')}`, drop: () => rm(dir, { recursive: true, force: true }) }
  }
  if (serverUrl === undefined) throw new Error(`a PostgreSQL ${purpose} store needs a server URL`)
  const schema = `petstore_${purpose}_${randomBytes(6).toString('hex')}`
  await withPostgres((client) => client.query(`CREATE SCHEMA ${schema}`), serverUrl)
  return {
    url: withSearchPath(serverUrl, schema),
    drop: async () => { await dropSchema(schema, serverUrl) }
  }
}

// a service still running on the schema (its background loops query it) can deadlock with the drop's locks
const DEADLOCK_DETECTED = '40P01'

/** Drops a schema, trying again a few times when PostgreSQL chose the drop as a deadlock's victim. */
async function dropSchema (schema: string, serverUrl: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await withPostgres((client) => client.query(`DROP SCHEMA ${schema} CASCADE`), serverUrl)
      return
    } catch (error) {
      if ((error as { code?: unknown }).code !== DEADLOCK_DETECTED || attempt === 5) throw error
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
    }
  }
}
