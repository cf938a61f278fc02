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

  // never shed: a liveness probe that failed under load would get a busy instance restarted
  app.get('/healthz', {
    config: { shed: false },
    schema: {
      ...common,
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      description: 'Answers 200 while the process is up, whatever the store does: for a liveness probe.',
      response: { 200: { ...statusSchema('ok'), description: 'The process is up: `{"status":"ok"}`.', examples: [{ status: 'ok' }] } }
    }
  }, async () => ({ status: 'ok' }))

  // not shed but answered: while overloaded it says so, and a balancer moves traffic away
  app.get('/readyz', {
    config: { shed: false },
    schema: {
      ...common,
      operationId: 'getReadiness',
      summary: 'Readiness: the store answers and the instance is not overloaded',
      description: 'Answers 200 when the store answers and the instance is not overloaded, and 503 when either is not so: for a load balancer\'s health check.',
      response: {
        200: { ...statusSchema('ready'), description: 'The store answers: `{"status":"ready"}`.', examples: [{ status: 'ready' }] },
        503: errorResponse('The store does not answer (`service_unavailable`), or the instance is overloaded and sheds new requests (`overloaded`); the message says which bound the event loop is past.', { 'Retry-After': RETRY_AFTER_HEADER })
      }
    }
  }, async (request) => {
    const overload = app.overloadReason()
    if (overload !== undefined) throw new ApiError('overloaded', `This instance is overloaded and sheds new requests: ${overload}.`)
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
