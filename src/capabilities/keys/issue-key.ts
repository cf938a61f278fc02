import { generateApiKey, hashApiKey } from './api-keys.js'
import type { ApiKeyRole } from './roles.js'
import type { ApiKeyRecord, KeyStore } from './store/key-store.js'

/** Creates a key with `role`: only its hash is stored; the key itself is returned, to be shown once. */
export async function issueApiKey (store: KeyStore, name: string, role: ApiKeyRole): Promise<{ key: string, record: ApiKeyRecord }> {
  const key = generateApiKey()
  return { key, record: await store.createApiKey(name, hashApiKey(key), role) }
}
