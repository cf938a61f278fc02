import type { KeyStore } from './store/key-store.js'
import { generateApiKey, hashApiKey } from './api-keys.js'

export const BOOTSTRAP_KEY_NAME = 'bootstrap'

/**
 * On the first start with no key anywhere, creates one so the person who just ran
 * `npm start` can call the API: an `admin` key, the operator's (`BOOTSTRAP_API_KEY_ROLE`).
 * Returns the key (to show once), or undefined when a key was ever created — revoking every
 * key must not mint a new one at the next restart — or when `fullAccessEnvironmentKeys`
 * (`PETSTORE_API_KEYS`, `PETSTORE_ADMIN_API_KEYS`) holds one. Only its hash is stored.
 */
export async function createBootstrapKeyIfNone (store: KeyStore, fullAccessEnvironmentKeys: readonly string[]): Promise<string | undefined> {
  if (fullAccessEnvironmentKeys.length > 0) return undefined
  const key = generateApiKey()
  // instances starting together on one database: only one of them creates (and prints) it
  return await store.createFirstApiKey(BOOTSTRAP_KEY_NAME, hashApiKey(key)) === undefined ? undefined : key
}
