import type { KeyStore } from './store/key-store.js'
import { generateApiKey, hashApiKey } from './api-keys.js'

export const BOOTSTRAP_KEY_NAME = 'bootstrap'

/**
 * On the first start with no key anywhere, creates one so the person who just ran
 * `npm start` can call the API. Returns the key (to show once), or undefined when a
 * key was ever created — revoking every key must not mint a new one at the next
 * restart. Only its hash is stored.
 */
export async function createBootstrapKeyIfNone (store: KeyStore, environmentKeys: readonly string[]): Promise<string | undefined> {
  if (environmentKeys.length > 0) return undefined
  const key = generateApiKey()
  // instances starting together on one database: only one of them creates (and prints) it
  return await store.createFirstApiKey(BOOTSTRAP_KEY_NAME, hashApiKey(key)) === undefined ? undefined : key
}
