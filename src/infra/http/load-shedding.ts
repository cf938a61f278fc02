import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { OverloadSettings } from '../config/config.js'
import { ApiError } from '../errors/catalogue.js'
import { acceptQueueLength, socketTablesFor } from './accept-queue.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False for a route answered even while the instance is overloaded (the probes). */
    shed?: boolean
  }
  interface FastifyInstance {
    /** Why the instance is shedding load now (for `/readyz`); undefined when it is not. */
    overloadReason: () => string | undefined
    /**
     * Work done once that is not load (the documents, built by the first request for one): the event
     * loop's delays until it settles are not taken for load, as the synchronous start-up's are not.
     */
    ignoreLoadDuring: (work: Promise<unknown>) => void
  }
}

/** How often the event loop's delay and utilisation are sampled, in ms: a sample decides until the next one. */
export const OVERLOAD_SAMPLE_INTERVAL_MS = 500
/**
 * How many samples in a row must each be past a bound before the instance sheds: one long turn of the
 * loop (a first `/docs`, a large page, a backup step) makes at most one sample late, however long it is,
 * while a loop that is really behind stays late sample after sample.
 */
export const OVERLOAD_SAMPLES_TO_SHED = 2
/**
 * A long accept queue that shrinks fast enough to be empty within this many ms (at the pace of the last
 * sample) is a burst being served, not overload: 200 new clients at once may wait a second or two.
 */
export const ACCEPT_QUEUE_DRAIN_MS = 2_000
/**
 * Requests one turn of the loop must already have served before it is taken for overload by its length alone
 * (see {@link LongTurn}): libuv's poll phase runs another round while each `epoll_wait` returns its 1,024
 * events, so only a turn past one round's worth is one that kept-alive connections keep going.
 */
export const LONG_TURN_REQUESTS = 1_024
// the delay histogram's timer, in ms: its own period is subtracted from the delays it records
const DELAY_RESOLUTION_MS = 10

// the accept queue is read only after a sample this busy: an idle or lightly loaded instance never reads the socket tables
const QUEUE_READ_UTILIZATION = 0.5

/** One sample's figures: the event loop's mean delay and utilisation, and the accept queue at its end. */
interface LoadSample {
  readonly delayMs: number
  readonly utilization: number
  readonly acceptQueue: number
  /** Requests that arrived during the sample, served or shed. */
  readonly arrivals: number
}

/** The socket the app listens on: its port, and `IPv4` or `IPv6` (which socket table lists it). */
interface ListeningSocket {
  readonly port: number
  readonly family: string
}

const IDLE: LoadSample = Object.freeze({ delayMs: 0, utilization: 0, acceptQueue: 0, arrivals: 0 })

/** Samples the event loop every {@link OVERLOAD_SAMPLE_INTERVAL_MS} and keeps the last {@link OVERLOAD_SAMPLES_TO_SHED} + 1 samples. */
class EventLoopLoad {
  /** The newest sample last. */
  samples: readonly LoadSample[] = []
  /** Whether the samples show the loop behind, as `judge` decided at the last sample (read on every request). */
  behind = false
  /** Requests arrived since the last sample. */
  arrivals = 0
  // start-up work in progress: samples are not taken meanwhile
  #ignored = 0
  readonly #listening: () => ListeningSocket | undefined
  readonly #judge: (samples: readonly LoadSample[]) => boolean

  constructor (listening: () => ListeningSocket | undefined, judge: (samples: readonly LoadSample[]) => boolean) {
    this.#listening = listening
    this.#judge = judge
  }

  readonly #histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS })
  #utilization: EventLoopUtilization = performance.eventLoopUtilization()
  #sampledAt = performance.now()
  #timer: NodeJS.Timeout | undefined

  get latest (): LoadSample {
    return this.samples.at(-1) ?? IDLE
  }

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

  /** No samples until `work` settles; the first one after it starts afresh. */
  ignore (work: Promise<unknown>): void {
    this.#ignored++
    this.samples = []
    this.behind = false
    const settled = (): void => {
      this.#ignored--
      this.#restart()
    }
    work.then(settled, settled)
  }

  #restart (): void {
    this.#histogram.reset()
    this.#utilization = performance.eventLoopUtilization()
    this.#sampledAt = performance.now()
    this.arrivals = 0
  }

  #sample (): void {
    if (this.#ignored > 0) {
      this.#restart()
      return
    }
    const now = performance.now()
    // a loop blocked since the sample began has recorded no delay yet: then this timer's own lateness is
    // the delay. Otherwise the mean of the delays recorded: one long turn is one delay among the sample's
    // many (one per 10 ms), so it makes one sample late, not the next one too, unless it lasted 5 s
    const delayMs = this.#histogram.count === 0
      ? now - this.#sampledAt - OVERLOAD_SAMPLE_INTERVAL_MS
      : this.#histogram.mean / 1e6 - DELAY_RESOLUTION_MS
    this.#histogram.reset()
    const current = performance.eventLoopUtilization()
    const utilization = performance.eventLoopUtilization(current, this.#utilization).utilization
    this.#utilization = current
    this.#sampledAt = now
    const arrivals = this.arrivals
    this.arrivals = 0
    const socket = utilization >= QUEUE_READ_UTILIZATION ? this.#listening() : undefined
    const acceptQueue = socket === undefined ? 0 : acceptQueueLength(socket.port, socketTablesFor(socket.family)) ?? 0
    this.samples = [...this.samples, { delayMs: Math.max(0, delayMs), utilization, acceptQueue, arrivals }].slice(-OVERLOAD_SAMPLES_TO_SHED - 1)
    this.behind = this.#judge(this.samples)
  }
}

/**
 * The turn of the event loop now running, as its requests see it: when the first of them arrived and how
 * many have. With more than a thousand kept-alive connections each sending its next request at once, libuv
 * stays in one poll phase for up to 48 rounds of 1,024 callbacks (1.2 s measured on Node 24, 2,000 wrk
 * connections) before any timer runs, so the samples (timers) judge such a turn only when it is over, and a
 * connection accepted during it is polled only once the next phase begins: a new client waited 1–3 s. A turn
 * that has served {@link LONG_TURN_REQUESTS} requests and lasted past the delay bound is overload now.
 */
class LongTurn {
  #startedAt = 0
  #requests = 0
  #open = false
  readonly #close = (): void => { this.#open = false }

  /** Counts a request of the turn now running; whether the turn is past both bounds. */
  arrive (boundMs: number): boolean {
    if (!this.#open) {
      this.#open = true
      this.#startedAt = performance.now()
      this.#requests = 0
      // the check phase: right after the poll phase, however many rounds it ran
      setImmediate(this.#close)
    }
    // the clock is read again only past the count, which an ordinary turn never reaches
    return ++this.#requests > LONG_TURN_REQUESTS && performance.now() - this.#startedAt > boundMs
  }
}

/**
 * Load shedding: while the event loop stays behind (each of the last {@link OVERLOAD_SAMPLES_TO_SHED}
 * samples past a bound: its mean delay, its utilisation or the accept queue) and work is actually
 * waiting (other requests arriving, or connections in the accept queue), every new request is answered
 * at once with 503 `overloaded` and `Retry-After`, before authentication or any store call, and counted in
 * `petstore_overload_shed_total`; routes configured `shed: false` (the probes) are served as usual.
 * So is each request past {@link LONG_TURN_REQUESTS} of one turn that has outlasted the delay bound.
 * Sampling starts when the app is ready, so the start-up's synchronous work is not taken for load.
 */
export const loadShedding = fp<{ settings: OverloadSettings }>(async (app, { settings }) => {
  const { maxEventLoopDelayMs, maxEventLoopUtilization, maxAcceptQueue } = settings
  if (!settings.shedding || (maxEventLoopDelayMs === 0 && maxEventLoopUtilization === 0 && maxAcceptQueue === 0)) {
    app.decorate('overloadReason', () => undefined)
    app.decorate('ignoreLoadDuring', () => {})
    return
  }
  const queueStuck = (sample: LoadSample, before: LoadSample | undefined): boolean => {
    if (sample.acceptQueue <= maxAcceptQueue) return false
    const drained = before === undefined ? 0 : before.acceptQueue - sample.acceptQueue
    return drained <= 0 || sample.acceptQueue / drained * OVERLOAD_SAMPLE_INTERVAL_MS > ACCEPT_QUEUE_DRAIN_MS
  }
  // each bound on its own: one sample late from a long turn and the next with the burst that waited behind it is no trend
  const triggers: Array<(sample: LoadSample, before: LoadSample | undefined) => boolean> = [
    ...(maxEventLoopDelayMs > 0 ? [(sample: LoadSample) => sample.delayMs > maxEventLoopDelayMs] : []),
    ...(maxEventLoopUtilization > 0 ? [(sample: LoadSample) => sample.utilization > maxEventLoopUtilization] : []),
    ...(maxAcceptQueue > 0 ? [queueStuck] : [])
  ]
  const load = new EventLoopLoad(() => {
    const address = maxAcceptQueue > 0 ? app.server.address() : null
    return address !== null && typeof address === 'object' ? address : undefined
  }, (samples) => {
    if (samples.length < OVERLOAD_SAMPLES_TO_SHED) return false
    const first = samples.length - OVERLOAD_SAMPLES_TO_SHED
    return triggers.some((passed) => samples.slice(first).every((sample, i) => passed(sample, samples[first + i - 1])))
  })
  // work waiting: requests that arrive while the loop is behind each wait for it (more than one in the last
  // sample, or since it), and so do queued connections; a lone request on an instance whose loop was held up
  // (by a backup, by the machine) is served
  const workWaiting = (): boolean => load.latest.arrivals > 1 || load.latest.acceptQueue > 0 || load.arrivals > 1
  const turn = maxEventLoopDelayMs > 0 ? new LongTurn() : undefined
  app.decorate('ignoreLoadDuring', (work: Promise<unknown>) => { load.ignore(work) })
  app.addHook('onReady', async () => { load.start() })
  app.addHook('onClose', async () => { load.stop() })
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.shed === false) {
      done()
      return
    }
    load.arrivals++
    const longTurn = turn?.arrive(maxEventLoopDelayMs) === true
    if (!longTurn && (!load.behind || !workWaiting())) {
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
  // readiness follows the loop alone: a balancer should send its traffic elsewhere while the loop is behind
  app.decorate('overloadReason', () => {
    if (!load.behind) return undefined
    const { delayMs, utilization, acceptQueue } = load.latest
    return `event-loop delay ${Math.round(delayMs)} ms (bound ${maxEventLoopDelayMs > 0 ? `${maxEventLoopDelayMs} ms` : 'none'}), ` +
      `utilisation ${Math.round(utilization * 100)}% (bound ${maxEventLoopUtilization > 0 ? `${Math.round(maxEventLoopUtilization * 100)}%` : 'none'}), ` +
      `${acceptQueue} connections waiting to be accepted (bound ${maxAcceptQueue > 0 ? maxAcceptQueue : 'none'}), ` +
      `for ${OVERLOAD_SAMPLES_TO_SHED} samples of ${OVERLOAD_SAMPLE_INTERVAL_MS} ms in a row`
  })
}, { name: 'petstore-load-shedding', dependencies: ['petstore-metrics'] })
