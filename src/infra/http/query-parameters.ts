import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'

/** The query string of an operation that takes no parameters: any parameter is unknown. */
const NO_QUERY_PARAMETERS = Type.Object({}, { additionalProperties: false })

/**
 * Makes every route registered in the calling context refuse query parameters its schema does
 * not name (400 naming the parameter), like unknown body fields: `?status[]=sold` must not
 * silently return the unfiltered list. A route without a query schema gets one that allows
 * none; a route with one must set `additionalProperties: false` itself.
 */
export function refuseUnknownQueryParameters (app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.methodNotAllowed === true || route.config?.notFound === true || route.schema?.querystring !== undefined) return
    route.schema = { ...route.schema, querystring: NO_QUERY_PARAMETERS }
  })
}
