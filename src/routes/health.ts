import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../errors/catalogue.js'
import { unversionedServers } from '../docs/openapi.js'
import { errorResponse, RETRY_AFTER_HEADER } from '../schemas/responses.js'
import { allowOnly } from '../http/method-not-allowed.js'

const StatusSchema = Type.Object({ status: Type.String() }, { additionalProperties: false })

/** Liveness and readiness probes: outside `/v1`, without authentication. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  const common = { tags: ['operations'], security: [], servers: unversionedServers(app.config) }

  app.get('/healthz', {
    schema: {
      ...common,
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      response: { 200: { ...StatusSchema, description: 'The process is up: `{"status":"ok"}`.', examples: [{ status: 'ok' }] } }
    }
  }, async () => ({ status: 'ok' }))

  app.get('/readyz', {
    schema: {
      ...common,
      operationId: 'getReadiness',
      summary: 'Readiness: the store answers',
      response: {
        200: { ...StatusSchema, description: 'The store answers: `{"status":"ready"}`.', examples: [{ status: 'ready' }] },
        503: errorResponse('The store does not answer (`service_unavailable`).', { 'Retry-After': RETRY_AFTER_HEADER })
      }
    }
  }, async (request) => {
    try {
      await app.store.ping()
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed')
      throw new ApiError('service_unavailable', 'The store is not reachable.')
    }
    return { status: 'ready' }
  })

  allowOnly(app, '/healthz', ['GET'])
  allowOnly(app, '/readyz', ['GET'])
}

export default health
