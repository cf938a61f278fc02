import type { DatabaseLocation } from '../config/config.js'
import type { EventStore } from '../../capabilities/events/store/event-store.js'
import type { MigrationResult, PetStore } from '../../capabilities/pets/store/pet-store.js'
import { describePostgres } from './postgres/connection.js'
import type { WebhookStore } from '../../capabilities/webhooks/store/webhook-store.js'

export interface OpenStoreOptions {
  /** Told about store failures that happen outside any call (e.g. a dropped idle connection). */
  onBackgroundError?: (error: Error) => void
}

/** A store as opened: the pets, the change feed and the webhooks on the same connection, and what migrating did. */
export interface OpenedStore {
  store: PetStore
  events: EventStore
  webhooks: WebhookStore
  migration: MigrationResult
}

/**
 * Opens the store `DATABASE_URL` names and brings its schema up to date.
 * Each engine's module is loaded only when it is used.
 */
export async function openStore (location: DatabaseLocation, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const store = await createStore(location, options)
  try {
    return { store, events: store.events, webhooks: store.webhooks, migration: await store.migrate() }
  } catch (error) {
    await store.close()
    throw error
  }
}

/** The location as logs and the CLI show it (never a password), without opening anything. */
export function describeDatabase (location: DatabaseLocation): string {
  switch (location.kind) {
    case 'sqlite': return `sqlite:${location.path}`
    case 'sqlite-memory': return 'sqlite::memory:'
    case 'postgres': return describePostgres(location.url)
  }
}

async function createStore (location: DatabaseLocation, options: OpenStoreOptions): Promise<PetStore & { readonly events: EventStore, readonly webhooks: WebhookStore }> {
  switch (location.kind) {
    case 'sqlite':
    case 'sqlite-memory': {
      const { SqlitePetStore } = await import('../../capabilities/pets/store/sqlite-pet-store.js')
      return new SqlitePetStore(location.kind === 'sqlite' ? { path: location.path } : { memory: true })
    }
    case 'postgres': {
      const { PostgresPetStore } = await import('../../capabilities/pets/store/postgres-pet-store.js')
      return new PostgresPetStore({ url: location.url, poolSize: location.poolSize, timeoutMs: location.timeoutMs, ...options })
    }
  }
}
