/** What an API key may do: `read` calls only the operations that read; `write` calls every operation. */
export const API_KEY_ROLES = ['read', 'write'] as const
export type ApiKeyRole = typeof API_KEY_ROLES[number]

/** The role of a key created without one (and of every key made before roles existed): full access. */
export const DEFAULT_API_KEY_ROLE: ApiKeyRole = 'write'

export { INSUFFICIENT_SCOPE_CHALLENGE } from '../../infra/credentials/credentials.js'

// the methods of operations that only read; every other method writes
const READING_METHODS = new Set(['GET', 'HEAD'])

/** The role an operation needs, decided by its method, so an operation added later is covered by construction. */
export function roleNeededFor (method: string): ApiKeyRole {
  return READING_METHODS.has(method) ? 'read' : 'write'
}

/** True when a key with `role` may call an operation that needs `needed`. */
export function roleAllows (role: ApiKeyRole, needed: ApiKeyRole): boolean {
  return role === 'write' || needed === 'read'
}

/** True for the name of a role. */
export function isApiKeyRole (value: string): value is ApiKeyRole {
  return (API_KEY_ROLES as readonly string[]).includes(value)
}
