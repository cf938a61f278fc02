import type autocannon from 'autocannon'
import { runAutocannon } from './autocannon.js'
import type { LoadResult, LoadSpec } from './load-spec.js'
import { ensureWrk, runWrk } from './wrk.js'

/** Runs loads with wrk, or with autocannon when wrk cannot be had. */
export interface LoadGenerator {
  readonly name: 'wrk' | 'autocannon'
  /** Why it is not wrk; undefined when it is. */
  readonly fallbackReason: string | undefined
  run (spec: LoadSpec): Promise<LoadResult>
}

/**
 * wrk when it is installed or can be (see {@link ensureWrk}); otherwise autocannon in this process,
 * and the caller must say so loudly: autocannon's single-process ceiling compresses every ratio.
 */
export function chooseLoadGenerator (log: (line: string) => void): LoadGenerator {
  const fallbackReason = ensureWrk(log)
  return fallbackReason === undefined
    ? { name: 'wrk', fallbackReason, run: runWrk }
    : { name: 'autocannon', fallbackReason, run: runAutocannonLoad }
}

/** `spec` through autocannon, with the same figures as wrk's. */
export async function runAutocannonLoad (spec: LoadSpec): Promise<LoadResult> {
  const requests = spec.requests.map((request): autocannon.Request => {
    const headers = request.body === undefined ? { ...spec.headers } : { ...spec.headers, 'content-type': 'application/json' }
    const range = request.randomIdRange
    return range === undefined
      ? { method: request.method, path: request.path, headers, body: request.body }
      : { method: request.method, headers, body: request.body, setupRequest: (r: autocannon.Request) => ({ ...r, path: `${request.path}${range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1))}` }) }
  })
  const result = await runAutocannon({ url: spec.origin, connections: spec.connections, duration: spec.durationSeconds, requests })
  return {
    generator: 'autocannon',
    requests: result.requests.total,
    durationSeconds: result.duration,
    reqPerSec: result.requests.total / result.duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts
  }
}
