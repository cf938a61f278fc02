import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
type Method = typeof METHODS[number]

/**
 * Answers 405 with `Allow` for the methods a path does not support (Fastify alone
 * would answer 404). Registered in the caller's context, so auth still comes first.
 */
export function allowOnly (app: FastifyInstance, url: string, allowed: readonly Method[]): void {
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ')
  app.route({
    method: METHODS.filter((method) => !allowed.includes(method)),
    url,
    schema: { hide: true },
    config: { methodNotAllowed: true },
    handler: async (request) => {
      throw new ApiError('method_not_allowed', `${request.method} is not allowed on ${request.url.split('?')[0] ?? url}; allowed: ${allow}`, { allow })
    }
  })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks the routes that only answer 405, so route listings can leave them out. */
    methodNotAllowed?: boolean
  }
}
