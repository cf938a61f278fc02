import fp from 'fastify-plugin'
import { Metrics } from './metrics.js'
import type { CounterSeries, HistogramSeries } from './tally.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** Decorates the app with its {@link Metrics} and counts and times every answer by operation and status. */
export const httpMetrics = fp(async (app) => {
  const metrics = new Metrics()
  app.decorate('metrics', metrics)
  // the two series of each operation, method and status, found with one look-up
  const seriesByAnswer = new Map<string, { requests: CounterSeries, duration: HistogramSeries }>()
  app.addHook('onResponse', (request, reply, done) => {
    // one read: Fastify builds routeOptions afresh on each
    const { schema, url } = request.routeOptions
    const operation = schema?.operationId ?? url ?? 'unmatched'
    const { method } = request
    const { statusCode } = reply
    const key = `${operation} ${method} ${statusCode}`
    let series = seriesByAnswer.get(key)
    if (series === undefined) {
      const status = String(statusCode)
      series = { requests: metrics.requests.series({ operation, method, status }), duration: metrics.requestDuration.series({ operation, status }) }
      seriesByAnswer.set(key, series)
    }
    series.requests.inc()
    series.duration.observe(reply.elapsedTime / 1000)
    done()
  })
}, { name: 'petstore-metrics' })
