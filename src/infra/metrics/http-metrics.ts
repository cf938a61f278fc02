import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { Metrics } from './metrics.js'
import type { CounterSeries, HistogramSeries } from './tally.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** The two series one kind of answer is counted and timed in. */
interface AnswerSeries {
  requests: CounterSeries
  duration: HistogramSeries
}

// requests answered with a stream: their answer's time is the stream's life, not a latency
const streamed = new WeakSet<FastifyRequest>()

/** Marks `request` as answered with a long-lived stream: it is counted when it ends, but its duration is not observed as a latency. */
export function markStreamedAnswer (request: FastifyRequest): void {
  streamed.add(request)
}

type CountAnswer = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

/**
 * Decorates the app with its {@link Metrics} and counts and times every answer by operation and status.
 * Each route gets its own hook, made when the route is registered, that knows its operation: a request
 * then costs one look-up by status, with no string built and no route options read. Answers of no route
 * (404s, and what `/v1` answers before that) are counted by one hook under `unmatched`.
 */
export const httpMetrics = fp(async (app) => {
  const metrics = new Metrics()
  app.decorate('metrics', metrics)

  /** The hook of one operation: its series by status, and by method too where requests of several methods reach it. */
  const countAnswersOf = (operation: string, severalMethods: boolean): CountAnswer => {
    const byAnswer = new Map<number | string, AnswerSeries>()
    const seriesOf = (method: string, statusCode: number): AnswerSeries => {
      const key = severalMethods ? `${method} ${statusCode}` : statusCode
      let series = byAnswer.get(key)
      if (series === undefined) {
        const status = String(statusCode)
        series = { requests: metrics.requests.series({ operation, method, status }), duration: metrics.requestDuration.series({ operation, status }) }
        byAnswer.set(key, series)
      }
      return series
    }
    return (request, reply, done) => {
      const series = seriesOf(request.method, reply.statusCode)
      series.requests.inc()
      if (!streamed.has(request)) series.duration.observe(reply.elapsedTime / 1000)
      done()
    }
  }

  app.addHook('onRoute', (route) => {
    const hook = countAnswersOf(route.schema?.operationId ?? route.url, [route.method].flat().length > 1)
    route.onResponse = route.onResponse === undefined ? [hook] : [...[route.onResponse].flat(), hook]
  })
  const unmatched = countAnswersOf('unmatched', true)
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request, reply, done)
    else done()
  })
}, { name: 'petstore-metrics' })
