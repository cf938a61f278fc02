/** The soak's report: the checks that decide pass or fail, and the report as a person reads it. */
import type { Exit } from '../../tools/harness/process-exit.js'
import type { RssSample } from '../../tools/harness/rss-sampler.js'
import type { LoadResult } from './load.js'
import type { KindReport, Mix } from './request-mix.js'
import type { LogLevelCounter } from './server-log.js'

export type { KindReport } from './request-mix.js'

/** The store a soak runs on. */
export type SoakStore = 'sqlite' | 'postgres'

export interface SoakReport {
  ok: boolean
  /** Why the run failed; empty when ok. */
  failures: string[]
  store: SoakStore
  connections: number
  durationSeconds: number
  warmupSeconds: number
  requests: {
    /** Responses received. */
    total: number
    perSecond: number
    byKind: Record<string, KindReport>
  }
  /** Responses whose status was not the one their kind must get. */
  unexpectedStatuses: number
  /** A few of them, with the start of their body, to see what went wrong. */
  unexpectedExamples: Array<{ kind: string, status: number, body: string }>
  /** Responses autocannon matched to another request than the one they answer (see the echoed X-Request-Id). */
  misattributed: number
  /** Responses that did not echo the request's X-Request-Id. */
  withoutRequestId: number
  /** Connection errors and timeouts (timeouts included). */
  errors: number
  timeouts: number
  /** Of the main connections (every kind but those answered with Connection: close). */
  latencyMs: { average: number, p50: number, p90: number, p99: number, max: number }
  memory: {
    /** Resident set size of the server when the warm-up ended. */
    rssAfterWarmupMb: number | undefined
    /** …when the load ended. */
    rssEndMb: number | undefined
    /** Largest sample after the warm-up. */
    rssMaxMb: number | undefined
    /** rssEndMb − rssAfterWarmupMb. */
    rssGrowthMb: number | undefined
    /** Least-squares slope of the samples after the warm-up, MB per minute. */
    rssTrendMbPerMinute: number | undefined
    samples: number
  }
  server: {
    exitCode: number | null
    signal: string | null
    /** Lines the server logged at warn (40) and at error or fatal (50+). */
    warnLines: number
    errorLines: number
    /** The first few such lines. */
    logExcerpt: string[]
  }
}

const MB = 1024 * 1024

/** What a run left to judge. */
export interface RunFacts {
  store: SoakStore
  connections: number
  warmupSeconds: number
  maxGrowthMb: number
  interrupted: boolean
  result: LoadResult
  mix: Mix
  samples: RssSample[]
  logLevels: LogLevelCounter
  exit: Exit
}

/** Judges the run: every check that failed is one line of `failures`. */
export function buildReport ({ store, connections, warmupSeconds, maxGrowthMb, interrupted, result, mix, samples, logLevels, exit }: RunFacts): SoakReport {
  const byKind = Object.fromEntries(mix.counts)
  const { main, closing } = result
  const errors = main.errors + (closing?.errors ?? 0)
  const timeouts = main.timeouts + (closing?.timeouts ?? 0)
  const total = [...mix.counts.values()].reduce((sum, kind) => sum + kind.total, 0)
  const unexpectedStatuses = [...mix.counts.values()].reduce((sum, kind) => sum + Object.values(kind.unexpected).reduce((a, b) => a + b, 0), 0)

  const afterWarmup = samples.filter((sample) => sample.atMs >= warmupSeconds * 1000)
  const baseline = afterWarmup[0]
  const end = afterWarmup.at(-1)
  const mb = (bytes: number | undefined): number | undefined => bytes === undefined ? undefined : round(bytes / MB)
  const rssGrowthMb = baseline === undefined || end === undefined || baseline === end ? undefined : round((end.rss - baseline.rss) / MB)
  const memory: SoakReport['memory'] = {
    rssAfterWarmupMb: mb(baseline?.rss),
    rssEndMb: mb(end?.rss),
    rssMaxMb: afterWarmup.length === 0 ? undefined : mb(Math.max(...afterWarmup.map((sample) => sample.rss))),
    rssGrowthMb,
    rssTrendMbPerMinute: slopePerMinute(afterWarmup),
    samples: samples.length
  }

  const failures: string[] = []
  if (interrupted) failures.push('the run was interrupted')
  if (total === 0) failures.push('no response was received')
  if (unexpectedStatuses > 0) {
    const detail = [...mix.counts].filter(([, kind]) => Object.keys(kind.unexpected).length > 0)
      .map(([name, kind]) => `${name} (expected ${kind.expected}): ${Object.entries(kind.unexpected).map(([status, count]) => `${count}× ${status}`).join(', ')}`)
    failures.push(`${unexpectedStatuses} response(s) with an unexpected status: ${detail.join('; ')}`)
  }
  if (errors > 0) failures.push(`${errors} connection error(s), ${timeouts} of them timeouts`)
  if (mix.withoutRequestId > 0) failures.push(`${mix.withoutRequestId} answer(s) did not echo the X-Request-Id their request sent`)
  if (mix.misattributed > 0) {
    failures.push(`autocannon matched ${mix.misattributed} response(s) to the wrong request: the server closed keep-alive connections on ` +
      'requests that should keep them (statuses are counted by the echoed X-Request-Id, but the latency figures are unreliable)')
  }
  if (rssGrowthMb === undefined) failures.push(`RSS growth could not be measured (${samples.length} sample(s), warm-up ${warmupSeconds} s)`)
  else if (rssGrowthMb > maxGrowthMb) failures.push(`RSS grew ${rssGrowthMb} MB after the warm-up, more than the ${maxGrowthMb} MB allowed`)
  if (logLevels.errorLines > 0) failures.push(`the server logged ${logLevels.errorLines} line(s) at error level or above`)
  if (exit.code !== 0) failures.push(`the server exited with ${exit.code === null ? `signal ${String(exit.signal)}` : `code ${exit.code}`} after SIGTERM, not 0`)

  return {
    ok: failures.length === 0,
    failures,
    store,
    connections,
    durationSeconds: main.duration,
    warmupSeconds,
    requests: { total, perSecond: round(total / main.duration), byKind },
    unexpectedStatuses,
    unexpectedExamples: mix.unexpectedExamples,
    misattributed: mix.misattributed,
    withoutRequestId: mix.withoutRequestId,
    errors,
    timeouts,
    latencyMs: { average: main.latency.average, p50: main.latency.p50, p90: main.latency.p90, p99: main.latency.p99, max: main.latency.max },
    memory,
    server: { exitCode: exit.code, signal: exit.signal, warnLines: logLevels.warnLines, errorLines: logLevels.errorLines, logExcerpt: logLevels.excerpt }
  }
}

function round (value: number, digits = 1): number {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}

/** Least-squares slope of RSS over time, in MB per minute; undefined with fewer than 3 samples. */
function slopePerMinute (samples: RssSample[]): number | undefined {
  if (samples.length < 3) return undefined
  const n = samples.length
  const meanT = samples.reduce((sum, s) => sum + s.atMs, 0) / n
  const meanR = samples.reduce((sum, s) => sum + s.rss, 0) / n
  const covariance = samples.reduce((sum, s) => sum + (s.atMs - meanT) * (s.rss - meanR), 0)
  const variance = samples.reduce((sum, s) => sum + (s.atMs - meanT) ** 2, 0)
  return variance === 0 ? undefined : round((covariance / variance) * 60_000 / MB, 2)
}

/** The report as a person reads it. */
export function formatReport (report: SoakReport): string {
  const figure = (value: number | undefined, unit: string): string => value === undefined ? 'n/a' : `${value} ${unit}`
  const lines = [
    `Soak on ${report.store}: ${report.durationSeconds} s, ${report.connections} connections, warm-up ${report.warmupSeconds} s`,
    `  requests        ${report.requests.total} (${report.requests.perSecond} req/s)`,
    ...Object.entries(report.requests.byKind).map(([name, kind]) => {
      const unexpected = Object.entries(kind.unexpected).map(([status, count]) => `${count}× ${status}`).join(', ')
      return `    ${name.padEnd(17)} ${String(kind.total).padStart(8)} × ${kind.expected}${unexpected === '' ? '' : `   UNEXPECTED: ${unexpected}`}`
    }),
    `  unexpected      ${report.unexpectedStatuses} (responses matched to the wrong request: ${report.misattributed}, without their X-Request-Id: ${report.withoutRequestId})`,
    `  errors          ${report.errors} (timeouts ${report.timeouts})`,
    `  latency         p50 ${report.latencyMs.p50} ms, p90 ${report.latencyMs.p90} ms, p99 ${report.latencyMs.p99} ms, max ${report.latencyMs.max} ms`,
    `  RSS             after warm-up ${figure(report.memory.rssAfterWarmupMb, 'MB')}, at end ${figure(report.memory.rssEndMb, 'MB')}, ` +
      `max ${figure(report.memory.rssMaxMb, 'MB')}, growth ${figure(report.memory.rssGrowthMb, 'MB')} (trend ${figure(report.memory.rssTrendMbPerMinute, 'MB/min')}, ${report.memory.samples} samples)`,
    `  server          exit ${report.server.exitCode ?? String(report.server.signal)} after SIGTERM; logged ${report.server.warnLines} warning(s), ${report.server.errorLines} error(s)`,
    ...report.server.logExcerpt.map((line) => `    ${line}`),
    ...report.unexpectedExamples.map((example) => `    ${example.kind} got ${example.status}: ${example.body}`),
    report.ok ? 'PASS' : `FAIL\n${report.failures.map((failure) => `  - ${failure}`).join('\n')}`
  ]
  return lines.join('\n')
}
