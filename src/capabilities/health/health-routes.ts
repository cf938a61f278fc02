import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { unversionedServers } from '../../infra/http/base-url.js'
import { errorResponse, RETRY_AFTER_HEADER } from '../../infra/schemas/responses.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'

/** A probe's answer: `{"status": <the one word it can say>}`. */
function statusSchema (status: string) {
  return Type.Object({ status: Type.Literal(status) }, { additionalProperties: false })
}

/** Liveness and readiness probes: outside `/v1`, without authentication. */
const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const common = { tags: ['operations'], security: [], servers: unversionedServers(app.config) }

  app.get('/healthz', {
    schema: {
      ...common,
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      description: 'Answers 200 while the process is up, whatever the store does: for a liveness probe.',
      response: { 200: { ...statusSchema('ok'), description: 'The process is up: `{"status":"ok"}`.', examples: [{ status: 'ok' }] } }
    }
  }, async () => ({ status: 'ok' }))

  app.get('/readyz', {
    schema: {
      ...common,
      operationId: 'getReadiness',
      summary: 'Readiness: the store answers',
      description: 'Answers 200 when the store answers and 503 when it does not: for a load balancer\'s health check.',
      response: {
        200: { ...statusSchema('ready'), description: 'The store answers: `{"status":"ready"}`.', examples: [{ status: 'ready' }] },
        503: errorResponse('The store does not answer (`service_unavailable`).', { 'Retry-After': RETRY_AFTER_HEADER })
      }
    }
  }, async (request) => {
    try {
      await app.database.ping()
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed')
      throw new ApiError('service_unavailable', 'The store is not reachable.')
    }
    return { status: 'ready' }
  })

  allowOnly(app, '/healthz', ['GET'])
  allowOnly(app, '/readyz', ['GET'])
}

export default healthRoutes
