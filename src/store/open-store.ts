import type { DatabaseLocation } from '../config.js'
import type { MigrationResult, PetStore } from './pet-store.js'

/**
 * Opens the store `DATABASE_URL` names and brings its schema up to date.
 * Each engine's module is loaded only when it is used.
 */
export async function openStore (location: DatabaseLocation): Promise<{ store: PetStore, migration: MigrationResult }> {
  const store = await createStore(location)
  try {
    return { store, migration: await store.migrate() }
  } catch (error) {
    await store.close()
    throw error
  }
}

async function createStore (location: DatabaseLocation): Promise<PetStore> {
  switch (location.kind) {
    case 'sqlite':
    case 'sqlite-memory': {
      const { SqlitePetStore } = await import('./sqlite-store.js')
      return new SqlitePetStore(location.kind === 'sqlite' ? { path: location.path } : { memory: true })
    }
  }
}
