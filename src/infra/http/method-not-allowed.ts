import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors/catalogue.js'

/**
 * Answers 405 with `Allow` for every method a path does not support (Fastify alone
 * would answer 404). Registered in the caller's context, so its auth hook still runs
 * first; the 405 is raised in onRequest, before any body is read.
 */
export function allowOnly (app: FastifyInstance, url: string, allowed: readonly string[]): void {
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])]
  const header = allow.join(', ')
  app.route({
    method: app.supportedMethods.filter((method) => !allow.includes(method)),
    url,
    schema: { hide: true },
    config: { methodNotAllowed: true },
    onRequest: async (request) => {
      throw new ApiError('method_not_allowed', `${request.method} is not allowed on ${request.url.split('?')[0] ?? url}; allowed: ${header}`, { allow: header })
    },
    handler: async () => {
      throw new Error('unreachable: the onRequest hook always answers')
    }
  })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks the routes that only answer 405, so route listings can leave them out. */
    methodNotAllowed?: boolean
  }
}
