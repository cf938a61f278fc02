/** API keys and their roles: the store of key hashes, authentication and the role check of `/v1`, the CLI's `keys` commands. */
export { keys, authenticate, authorize } from './keys-plugin.js'
export type { AuthenticatedKey } from './bearer-auth.js'
export { createBootstrapKeyIfNone } from './bootstrap-key.js'
export { API_KEY_PREFIX, BEARER_TOKEN, ISSUED_API_KEY, generateApiKey, hashApiKey } from './api-keys.js'
export {
  ADMIN_ONLY, API_KEY_ROLES, API_KEY_ROLE_SCOPES, INSUFFICIENT_SCOPE_CHALLENGE, insufficientScopeDescription, insufficientScopeMessage, roleNeededFor, rolesBelow, type ApiKeyRole
} from './roles.js'
export { createKeyStore } from './store/create-key-store.js'
export type { ApiKeyRecord, KeyStore } from './store/key-store.js'
