/**
 * What an API key may do, lowest first: each role may call every operation the roles before it may.
 * `read` calls only the operations that read; `write` every operation but the admin-only ones; `admin` every operation.
 */
export const API_KEY_ROLES = ['read', 'write', 'admin'] as const
export type ApiKeyRole = typeof API_KEY_ROLES[number]

/**
 * What each role may call: the OpenAPI description's table of roles, the CLI's help and the 403 messages are built
 * from it. The operators' table is docs/operations.md's "Key roles" (checked against these roles by test/keys/roles.test.ts).
 */
export const API_KEY_ROLE_SCOPES: Readonly<Record<ApiKeyRole, string>> = Object.freeze({
  read: 'only the operations that read (`GET`, `HEAD`)',
  write: 'every operation but the admin-only ones',
  admin: 'every operation: those a `write` key may call, and the admin-only ones (managing webhook endpoints)'
})

/** The role of a key created without one (and of every key made before roles existed): every operation but the admin-only ones. */
export const DEFAULT_API_KEY_ROLE: ApiKeyRole = 'write'

/** The role of the key the first start creates (the operator's): every operation. Keys created before `admin` existed keep their role. */
export const BOOTSTRAP_API_KEY_ROLE: ApiKeyRole = 'admin'

export { INSUFFICIENT_SCOPE_CHALLENGE } from '../../infra/credentials/credentials.js'

// the methods of operations that only read; every other method writes
const READING_METHODS = new Set(['GET', 'HEAD'])

function rankOf (role: ApiKeyRole): number {
  return API_KEY_ROLES.indexOf(role)
}

/**
 * The role an operation needs: decided by its method (`read` for GET and HEAD, `write` for any other), so an
 * operation added later is covered by construction, raised to `declared` when its route declares more
 * (`config: { requiredRole: 'admin' }`, see {@link ADMIN_ONLY}). A declaration never lowers what the method needs.
 */
export function roleNeededFor (method: string, declared?: ApiKeyRole): ApiKeyRole {
  const byMethod: ApiKeyRole = READING_METHODS.has(method) ? 'read' : 'write'
  return declared !== undefined && rankOf(declared) > rankOf(byMethod) ? declared : byMethod
}

/** True when a key with `role` may call an operation that needs `needed`. */
export function roleAllows (role: ApiKeyRole, needed: ApiKeyRole): boolean {
  return rankOf(role) >= rankOf(needed)
}

/** The roles that may not call an operation needing `needed`, lowest first. */
export function rolesBelow (needed: ApiKeyRole): ApiKeyRole[] {
  return API_KEY_ROLES.filter((role) => !roleAllows(role, needed))
}

/** True for the name of a role. */
export function isApiKeyRole (value: string): value is ApiKeyRole {
  return (API_KEY_ROLES as readonly string[]).includes(value)
}

/** The message of the 403 `insufficient_scope` a key with `role` gets from `operation` (an id, or `METHOD /path`), which needs `needed`. */
export function insufficientScopeMessage (role: ApiKeyRole, needed: ApiKeyRole, operation: string): string {
  const may = role === 'read' ? 'which may only call operations that read' : `which may call ${API_KEY_ROLE_SCOPES[role]}`
  return `This API key has the ${role} role, ${may}; ${operation} needs a key with the ${needed} role.`
}

/** The description of the 403 of an operation that needs `needed` (the OpenAPI document's). */
export function insufficientScopeDescription (needed: ApiKeyRole): string {
  return `The API key is valid but has the ${rolesBelow(needed).map((role) => `\`${role}\``).join(' or ')} role, and this operation needs ` +
    `the \`${needed}\` role (\`insufficient_scope\`); decided before the body is read, so nothing about it is checked or changed.`
}

/**
 * The route `config` of an operation only `admin` keys may call (the others get 403 `insufficient_scope`):
 * `app.post('/webhook-endpoints', { config: { ...ADMIN_ONLY }, schema }, handler)` in a context behind `authorize`.
 * The role check and the OpenAPI document's 403 both read it, so the route needs nothing else.
 */
export const ADMIN_ONLY: { readonly requiredRole: 'admin' } = { requiredRole: 'admin' }

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The role a key needs to call this route when its method alone asks for less (see `roleNeededFor`):
     * `admin` for the operations that manage webhook endpoints ({@link ADMIN_ONLY}). It can only raise what the method needs.
     */
    requiredRole?: ApiKeyRole
  }
}
