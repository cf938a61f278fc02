import fp from 'fastify-plugin'
import { Metrics } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** Decorates the app with its {@link Metrics} and counts and times every answer by operation and status. */
export const httpMetrics = fp(async (app) => {
  const metrics = new Metrics()
  app.decorate('metrics', metrics)
  app.addHook('onResponse', (request, reply, done) => {
    // one read: Fastify builds routeOptions afresh on each
    const { schema, url } = request.routeOptions
    const operation = schema?.operationId ?? url ?? 'unmatched'
    const status = String(reply.statusCode)
    metrics.requests.inc({ operation, method: request.method, status })
    metrics.requestDuration.observe({ operation, status }, reply.elapsedTime / 1000)
    done()
  })
}, { name: 'petstore-metrics' })
