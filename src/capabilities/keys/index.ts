/** API keys and their roles: the store of key hashes, authentication and the role check of `/v1`, the CLI's `keys` commands. */
export { keys, authenticate, authorize } from './keys-plugin.js'
export type { AuthenticatedKey } from './bearer-auth.js'
export { createBootstrapKeyIfNone } from './bootstrap-key.js'
export { API_KEY_PREFIX, BEARER_TOKEN, ISSUED_API_KEY, generateApiKey, hashApiKey } from './api-keys.js'
export { INSUFFICIENT_SCOPE_CHALLENGE, roleNeededFor, API_KEY_ROLES, type ApiKeyRole } from './roles.js'
export { createKeyStore } from './store/create-key-store.js'
export type { ApiKeyRecord, KeyStore } from './store/key-store.js'
