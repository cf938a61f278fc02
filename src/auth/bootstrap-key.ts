import type { PetStore } from '../store/pet-store.js'
import { generateApiKey, hashApiKey } from './api-keys.js'

export const BOOTSTRAP_KEY_NAME = 'bootstrap'

/**
 * On a first start with no key anywhere, creates one so the person who just ran
 * `npm start` can call the API. Returns the key (to show once) or undefined when
 * keys already exist. Only its hash is stored.
 */
export async function createBootstrapKeyIfNone (store: PetStore, environmentKeys: readonly string[]): Promise<string | undefined> {
  if (environmentKeys.length > 0 || await store.countActiveApiKeys() > 0) return undefined
  const key = generateApiKey()
  await store.createApiKey(BOOTSTRAP_KEY_NAME, hashApiKey(key))
  return key
}
