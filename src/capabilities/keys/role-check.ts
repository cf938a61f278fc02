import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../infra/errors/catalogue.js'
import type { AuthenticatedKey } from './bearer-auth.js'
import { INSUFFICIENT_SCOPE_CHALLENGE, insufficientScopeMessage, roleAllows, roleNeededFor, type ApiKeyRole } from './roles.js'

export interface RoleCheckOptions {
  /** Told of each refusal (for metrics): the key (its name and role, never the key) and the operation. */
  onRefused?: (key: AuthenticatedKey, operation: string) => void
  /** Told, once per key name and role, of each key that may be refused, with every API operation (by id) it would be refused: to export the refusals' series at 0. */
  onRefusable?: (key: AuthenticatedKey, operations: readonly string[]) => void
}

// a key with it is never refused
const HIGHEST_ROLE: ApiKeyRole = 'admin'

/**
 * Adds an onRequest hook to the calling context, to be added after authentication: an operation answers 403
 * `insufficient_scope` to a key whose role is below the one it needs ({@link roleNeededFor}: by method, raised by
 * the route's `config.requiredRole`), before its body is read or validated. Unknown paths and the 405 stand-ins
 * are left to answer 404 and 405: they do nothing a key could misuse.
 */
export function addRoleCheck (app: FastifyInstance, options: RoleCheckOptions = {}): void {
  const { onRefusable } = options
  // the operations that need more than the read role, as the routes registered after this hook declare them
  const guarded: Array<{ operation: string, needed: ApiKeyRole }> = []
  const told = new Set<string>()
  if (onRefusable !== undefined) {
    app.addHook('onRoute', (route) => {
      // the API's operations (those with an id); a refusal elsewhere (a stand-in route) is counted from its first
      const operation = route.schema?.operationId
      if (operation === undefined) return
      for (const method of [route.method].flat()) {
        const needed = roleNeededFor(method, route.config?.requiredRole)
        if (needed !== 'read') guarded.push({ operation, needed })
      }
    })
  }
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const key = request.apiKey
    if (onRefusable !== undefined && key !== null && key.role !== HIGHEST_ROLE) {
      const id = `${key.role}:${key.name}`
      if (!told.has(id)) {
        told.add(id)
        onRefusable(key, [...new Set(guarded.filter(({ needed }) => !roleAllows(key.role, needed)).map(({ operation }) => operation))])
      }
    }
    const route = request.routeOptions
    if (key === null || route.url === undefined || route.config.methodNotAllowed === true) {
      done()
      return
    }
    const needed = roleNeededFor(request.method, route.config.requiredRole)
    if (roleAllows(key.role, needed)) {
      done()
      return
    }
    const operation = route.schema?.operationId ?? `${request.method} ${route.url}`
    options.onRefused?.(key, operation)
    done(new ApiError('insufficient_scope', insufficientScopeMessage(key.role, needed, operation), { 'www-authenticate': INSUFFICIENT_SCOPE_CHALLENGE }))
  })
}
