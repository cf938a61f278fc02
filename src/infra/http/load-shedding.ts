import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { OverloadSettings } from '../config/config.js'
import { ApiError } from '../errors/catalogue.js'
import { acceptQueueLength } from './accept-queue.js'

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

/** How often the event loop's delay and utilisation are sampled, in ms: a sample decides until the next one. */
export const OVERLOAD_SAMPLE_INTERVAL_MS = 500
// the delay histogram's timer, in ms: its own period is subtracted from the mean
const DELAY_RESOLUTION_MS = 10

// the accept queue is read only after a sample this busy: an idle or lightly loaded instance never reads the socket tables
const QUEUE_READ_UTILIZATION = 0.5

/** The event loop's mean delay and utilisation over the last sample, and the accept queue at its end. */
class EventLoopLoad {
  delayMs = 0
  utilization = 0
  acceptQueue = 0
  readonly #port: () => number | undefined

  constructor (port: () => number | undefined) {
    this.#port = port
  }

  readonly #histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS })
  #utilization: EventLoopUtilization = performance.eventLoopUtilization()
  #sampledAt = performance.now()
  #timer: NodeJS.Timeout | undefined

  /** From now on: what happened before (the synchronous start-up) is no load. */
  start (): void {
    this.#histogram.enable()
    this.#utilization = performance.eventLoopUtilization()
    this.#sampledAt = performance.now()
    this.#timer = setInterval(() => { this.#sample() }, OVERLOAD_SAMPLE_INTERVAL_MS).unref()
  }

  stop (): void {
    clearInterval(this.#timer)
    this.#histogram.disable()
  }

  #sample (): void {
    const now = performance.now()
    // a loop blocked the whole sample may have recorded no delay yet: then this timer's own lateness is the delay
    const late = now - this.#sampledAt - OVERLOAD_SAMPLE_INTERVAL_MS
    const mean = this.#histogram.count === 0 ? 0 : this.#histogram.mean / 1e6 - DELAY_RESOLUTION_MS
    this.delayMs = Math.max(0, mean, late)
    this.#histogram.reset()
    const utilization = performance.eventLoopUtilization()
    this.utilization = performance.eventLoopUtilization(utilization, this.#utilization).utilization
    this.#utilization = utilization
    this.#sampledAt = now
    const port = this.utilization >= QUEUE_READ_UTILIZATION ? this.#port() : undefined
    this.acceptQueue = port === undefined ? 0 : acceptQueueLength(port) ?? 0
  }
}

/**
 * Load shedding: while the event loop falls behind (its mean delay or its utilisation over the last
 * sample past the configured bounds), every new request is answered at once with 503 `overloaded`
 * and `Retry-After`, before authentication or any store call, and counted in
 * `petstore_overload_shed_total`; routes configured `shed: false` (the probes) are served as usual.
 * Sampling starts when the app is ready, so the start-up's synchronous work is not taken for load.
 */
export const loadShedding = fp<{ settings: OverloadSettings }>(async (app, { settings }) => {
  const { maxEventLoopDelayMs, maxEventLoopUtilization, maxAcceptQueue } = settings
  if (!settings.shedding || (maxEventLoopDelayMs === 0 && maxEventLoopUtilization === 0 && maxAcceptQueue === 0)) {
    app.decorate('overloadReason', () => undefined)
    return
  }
  const load = new EventLoopLoad(() => {
    const address = maxAcceptQueue > 0 ? app.server.address() : null
    return address !== null && typeof address === 'object' ? address.port : undefined
  })
  const overloaded = (): boolean => (maxEventLoopDelayMs > 0 && load.delayMs > maxEventLoopDelayMs) ||
    (maxEventLoopUtilization > 0 && load.utilization > maxEventLoopUtilization) ||
    (maxAcceptQueue > 0 && load.acceptQueue > maxAcceptQueue)
  app.addHook('onReady', async () => { load.start() })
  app.addHook('onClose', async () => { load.stop() })
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.shed === false || !overloaded()) {
      done()
      return
    }
    app.metrics.overloadShed.inc()
    // the connection closes after the 503, as an overloaded proxy disables keep-alive: the event loop
    // accepts one new connection per turn (libuv), and a turn serves every kept-alive connection's next
    // request, so with thousands of them a new client waits in the accept queue for seconds; closing them
    // makes the turns short and lets the queue in (docs/operations.md#overload-load-shedding)
    reply.header('connection', 'close')
    done(new ApiError('overloaded'))
  })
  app.decorate('overloadReason', () => {
    if (!overloaded()) return undefined
    return `event-loop delay ${Math.round(load.delayMs)} ms (bound ${maxEventLoopDelayMs > 0 ? `${maxEventLoopDelayMs} ms` : 'none'}), ` +
      `utilisation ${Math.round(load.utilization * 100)}% (bound ${maxEventLoopUtilization > 0 ? `${Math.round(maxEventLoopUtilization * 100)}%` : 'none'}), ` +
      `${load.acceptQueue} connections waiting to be accepted (bound ${maxAcceptQueue > 0 ? maxAcceptQueue : 'none'})`
  })
}, { name: 'petstore-load-shedding', dependencies: ['petstore-metrics'] })
