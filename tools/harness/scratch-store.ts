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
    drop: async () => { await withPostgres((client) => client.query(`DROP SCHEMA ${schema} CASCADE`), serverUrl) }
  }
}
