import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../infra/errors/catalogue.js'
import type { AuthenticatedKey } from './bearer-auth.js'
import { INSUFFICIENT_SCOPE_CHALLENGE, roleAllows, roleNeededFor } from './roles.js'

export interface RoleCheckOptions {
  /** Told of each refusal (for metrics): the key (its name and role, never the key) and the operation. */
  onRefused?: (key: AuthenticatedKey, operation: string) => void
  /** Told, once per key name and role, of each key that may be refused, with every API operation (by id) it would be refused: to export the refusals' series at 0. */
  onRefusable?: (key: AuthenticatedKey, operations: readonly string[]) => void
}

/**
 * Adds an onRequest hook to the calling context, to be added after authentication: an operation that
 * writes (any method but GET and HEAD, see {@link roleNeededFor}) answers 403 `insufficient_scope` to a
 * key without the write role, before its body is read or validated. Unknown paths and the 405 stand-ins
 * are left to answer 404 and 405: they do nothing a read key could misuse.
 */
export function addRoleCheck (app: FastifyInstance, options: RoleCheckOptions = {}): void {
  const { onRefusable } = options
  // the operations that need the write role, as the routes registered after this hook name them
  const writing: string[] = []
  const told = new Set<string>()
  if (onRefusable !== undefined) {
    app.addHook('onRoute', (route) => {
      // the API's operations (those with an id); a refusal elsewhere (a stand-in route) is counted from its first
      const operation = route.schema?.operationId
      if (operation !== undefined && [route.method].flat().some((method) => roleNeededFor(method) === 'write')) writing.push(operation)
    })
  }
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const key = request.apiKey
    if (onRefusable !== undefined && key !== null && !roleAllows(key.role, 'write')) {
      const id = `${key.role}:${key.name}`
      if (!told.has(id)) {
        told.add(id)
        onRefusable(key, writing)
      }
    }
    const needed = roleNeededFor(request.method)
    if (key === null || roleAllows(key.role, needed) || request.routeOptions.url === undefined || request.routeOptions.config.methodNotAllowed === true) {
      done()
      return
    }
    const operation = request.routeOptions.schema?.operationId ?? `${request.method} ${request.routeOptions.url}`
    options.onRefused?.(key, operation)
    done(new ApiError('insufficient_scope', `This API key has the ${key.role} role, which may only call operations that read; ${operation} needs a key with the ${needed} role.`,
      { 'www-authenticate': INSUFFICIENT_SCOPE_CHALLENGE }))
  })
}
