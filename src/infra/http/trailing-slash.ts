import type { FastifyInstance } from 'fastify'
import { noRoute } from './error-handler.js'

// the part of a route's URL before its last segment, when that segment is a parameter: "/v1/pets/" of "/v1/pets/:petId"
const PARENT_OF_PARAMETER = /^(.*\/):[^/]+$/

/**
 * No path ends in "/": one a client writes so is answered 404, like any path no route serves.
 * Static paths need nothing for that (the router matches them exactly); but a route whose last
 * segment is a parameter would take `/pets/` as `/pets/{petId}` with an empty id, so for each such
 * route this registers a stand-in at `/pets/` (a static path wins over a parameter) that answers
 * 404 to every method. Call it in the context whose routes it covers, before they are registered:
 * the stand-ins then run that context's hooks (authentication first) and nothing of the route's.
 */
export function refuseTrailingSlashes (app: FastifyInstance): void {
  const covered = new Set<string>()
  app.addHook('onRoute', (route) => {
    const parent = PARENT_OF_PARAMETER.exec(route.url)?.[1]
    if (parent === undefined || covered.has(parent)) return
    covered.add(parent)
    app.route({
      method: app.supportedMethods,
      url: parent.slice(app.prefix.length),
      schema: { hide: true },
      config: { notFound: true },
      onRequest: async (request) => { throw noRoute(request) },
      handler: async () => {
        throw new Error('unreachable: the onRequest hook always answers')
      }
    })
  })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks the routes that only answer 404, so route listings can leave them out. */
    notFound?: boolean
  }
}
