import { LOAD_GENERATOR_CPU, PINNING, SERVER_CPU } from '../../tools/harness/cpu-pinning.js'
import { cpuTicks, stealPercent } from '../../tools/harness/cpu-steal.js'
import { cpuTimeNs } from '../../tools/harness/cpu-time.js'
import type { LoadGenerator } from '../../tools/harness/load-generator.js'
import type { LoadRequest } from '../../tools/harness/load-spec.js'
import { RssSampler } from '../../tools/harness/rss-sampler.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import { CONNECTIONS, log, type Plan } from './plan.js'

const MB = 1024 * 1024

/** One timed run against one server. */
export interface Measurement {
  reqPerSec: number
  /** CPU time of the server (all threads, and its children) over the run, per request answered, in µs. */
  cpuUsPerRequest: number | undefined
  latencyMs: { p50: number, p90: number, p99: number }
  requests: number
  non2xx: number
  errors: number
  /** Largest RSS of the server (and its children) during the run. */
  rssMaxMb: number | undefined
  /** The service's event-loop lag over the run, 99th percentile, beyond prom-client's 10 ms sampling period (its `petstore_nodejs_eventloop_lag_p99_seconds` − 10 ms); undefined for the others. */
  eventLoopLagP99Ms?: number
  /**
   * The hypervisor's steal over the run, in percent of the server's CPU and of the load generator's (of all
   * CPUs, both, when not pinned): time the machine did not run either while it was ready to, which no server's
   * code can shorten; a stall of the load generator's CPU delays every answer in flight, as wrk times them.
   */
  stealPercent?: { server: number | undefined, loadGenerator: number | undefined }
}

/** What the measurements share: the load generator and how long to load. */
export interface MeasureContext {
  plan: Plan
  generator: LoadGenerator
  /** Sent with every request (the bearer key). */
  headers: Record<string, string>
}

// prom-client samples the event loop with a timer of this period (its eventLoopMonitoringPrecision
// default), and its "lag" histogram records the whole time between two samples: an idle loop reads 10 ms
const EVENT_LOOP_SAMPLING_MS = 10

/**
 * The 99th percentile of the event-loop lag a service reports at `metricsUrl`, in ms beyond the
 * sampling period (an idle loop reads 0). prom-client starts its lag histogram afresh after each
 * scrape, so a scrape before a run and one after it give the run's own lag.
 */
async function eventLoopLagP99Ms (metricsUrl: string): Promise<number | undefined> {
  const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) })).text()
  const seconds = /^petstore_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1]
  return seconds === undefined ? undefined : Math.max(0, Number(seconds) * 1000 - EVENT_LOOP_SAMPLING_MS)
}

/**
 * Loads `server` with `requests` (after a warm-up when `warmup`), reading its CPU time before and after
 * the timed run, and, for a service with `metricsUrl`, its event-loop lag over the run (scraped outside
 * the CPU reading).
 */
export async function measure (context: MeasureContext, server: ServerProcess, requests: readonly LoadRequest[], warmup: boolean, metricsUrl?: string): Promise<Measurement> {
  const spec = { origin: server.baseUrl, headers: context.headers, requests, connections: CONNECTIONS }
  if (warmup) await context.generator.run({ ...spec, durationSeconds: context.plan.warmupSeconds })
  if (metricsUrl !== undefined) await eventLoopLagP99Ms(metricsUrl)
  const pids = server.processTree()
  const sampler = new RssSampler(() => server.processTree())
  const ticksBefore = cpuTicks()
  const cpuBefore = cpuTimeNs(pids)
  const result = await context.generator.run({ ...spec, durationSeconds: context.plan.durationSeconds })
  const cpuAfter = cpuTimeNs(pids)
  const ticksAfter = cpuTicks()
  sampler.stop()
  if (!server.running) throw new Error(`${server.label} exited during the run; stderr:\n${server.stderr.slice(-4_000)}`)
  const rssMax = sampler.maxBytes
  const lagMs = metricsUrl === undefined ? undefined : await eventLoopLagP99Ms(metricsUrl)
  return {
    reqPerSec: result.reqPerSec,
    cpuUsPerRequest: cpuBefore === undefined || cpuAfter === undefined || result.requests === 0 ? undefined : (cpuAfter - cpuBefore) / 1000 / result.requests,
    latencyMs: result.latencyMs,
    requests: result.requests,
    non2xx: result.non2xx,
    errors: result.errors,
    rssMaxMb: rssMax === undefined ? undefined : rssMax / MB,
    ...(lagMs === undefined ? {} : { eventLoopLagP99Ms: lagMs }),
    stealPercent: {
      server: stealPercent(ticksBefore, ticksAfter, PINNING.available ? SERVER_CPU : ''),
      loadGenerator: stealPercent(ticksBefore, ticksAfter, PINNING.available ? LOAD_GENERATOR_CPU : '')
    }
  }
}

/** One side of an A/B comparison. */
export interface Contender {
  role: string
  server: ServerProcess
  requests: readonly LoadRequest[]
  /** The service's `/metrics`, to read its event-loop lag from. */
  metricsUrl?: string
}

/** Every round's measurement, per role, in round order. */
export type Rounds = Record<string, Measurement[]>

/**
 * Measures the contenders in turn, `plan.rounds` times (A, B, C, A, B, C…), so that a machine
 * that drifts during the run drifts for all of them alike.
 */
export async function alternate (context: MeasureContext, label: string, contenders: readonly Contender[]): Promise<Rounds> {
  const rounds: Rounds = Object.fromEntries(contenders.map((contender) => [contender.role, []]))
  for (let round = 0; round < context.plan.rounds; round++) {
    for (const contender of contenders) {
      const measurement = await measure(context, contender.server, contender.requests, round === 0, contender.metricsUrl)
      rounds[contender.role]?.push(measurement)
      log(`${label}, ${contender.role}, round ${round + 1}/${context.plan.rounds}: ${describe(measurement)}`)
    }
  }
  return rounds
}

function describe (m: Measurement): string {
  const cpu = m.cpuUsPerRequest === undefined ? '–' : m.cpuUsPerRequest.toFixed(1)
  const failures = m.non2xx + m.errors > 0 ? `, non-2xx ${m.non2xx}, errors ${m.errors}` : ''
  const lag = m.eventLoopLagP99Ms === undefined ? '' : `, event-loop lag p99 ${m.eventLoopLagP99Ms.toFixed(2)} ms`
  const { server, loadGenerator } = m.stealPercent ?? {}
  const steal = (server ?? 0) + (loadGenerator ?? 0) > 0 ? `, steal ${(server ?? 0).toFixed(1)} % / ${(loadGenerator ?? 0).toFixed(1)} % (server / load CPU)` : ''
  return `${Math.round(m.reqPerSec)} req/s, ${cpu} µs CPU/request, p50 ${m.latencyMs.p50.toFixed(2)} ms, p99 ${m.latencyMs.p99.toFixed(2)} ms${lag}${steal}${failures}`
}

/** The median of `values` (the mean of the middle two for an even count); undefined for none. */
export function median (values: ReadonlyArray<number | undefined>): number | undefined {
  const sorted = values.filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b)
  if (sorted.length === 0) return undefined
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/** The median over rounds of `a`'s figure divided by `b`'s in the same round. */
export function pairedRatio (a: readonly Measurement[] | undefined, b: readonly Measurement[] | undefined, figure: (m: Measurement) => number | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined
  return median(a.map((measurement, round) => {
    const numerator = figure(measurement)
    const other = b[round]
    const denominator = other === undefined ? undefined : figure(other)
    return numerator === undefined || denominator === undefined || denominator === 0 ? undefined : numerator / denominator
  }))
}
