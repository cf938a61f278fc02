import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import type { OverloadSettings } from '../config/config.js'
import { ApiError } from '../errors/catalogue.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False for a route answered even while the instance is overloaded (the probes). */
    shed?: boolean
  }
  interface FastifyInstance {
    /** Why the instance is shedding load now (for `/readyz`); undefined when it is not. */
    overloadReason: () => string | undefined
  }
}

/** How often the event loop's delay and utilisation are sampled, in ms: the shortest overload seen, and the longest one outlived. */
export const OVERLOAD_SAMPLE_INTERVAL_MS = 500

/**
 * Load shedding: while the event loop falls behind (its mean delay or its utilisation over the last
 * sample past the configured bounds), every new request is answered at once with 503 `overloaded`
 * and `Retry-After`, before authentication or any store call, and counted in
 * `petstore_overload_shed_total`; routes configured `shed: false` (the probes) are served as usual.
 * @fastify/under-pressure samples the loop; this decides what is shed and how it is answered.
 */
export const loadShedding = fp<{ settings: OverloadSettings }>(async (app, { settings }) => {
  const checked = settings.shedding && (settings.maxEventLoopDelayMs > 0 || settings.maxEventLoopUtilization > 0)
  if (!checked) {
    app.decorate('overloadReason', () => undefined)
    return
  }
  await app.register(underPressure, {
    sampleInterval: OVERLOAD_SAMPLE_INTERVAL_MS,
    maxEventLoopDelay: settings.maxEventLoopDelayMs,
    maxEventLoopUtilization: settings.maxEventLoopUtilization,
    // the utilisation of the last sample, not the average since the process started
    eventLoopUtilizationMode: 'interval',
    pressureHandler: async (request) => {
      if (request.routeOptions.config.shed === false) return
      app.metrics.overloadShed.inc()
      throw new ApiError('overloaded')
    }
  })
  app.decorate('overloadReason', () => {
    if (!app.isUnderPressure()) return undefined
    const { eventLoopDelay, eventLoopUtilized } = app.memoryUsage()
    return `event-loop delay ${Math.round(eventLoopDelay)} ms (bound ${settings.maxEventLoopDelayMs === 0 ? 'none' : `${settings.maxEventLoopDelayMs} ms`}), ` +
      `utilisation ${Math.round(eventLoopUtilized * 100)}% (bound ${settings.maxEventLoopUtilization === 0 ? 'none' : `${Math.round(settings.maxEventLoopUtilization * 100)}%`})`
  })
}, { name: 'petstore-load-shedding', dependencies: ['petstore-metrics'] })
