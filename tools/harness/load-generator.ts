import type autocannon from 'autocannon'
import { runAutocannon } from './autocannon.js'
import { countedBody, countingRequestOf, type LoadResult, type LoadSpec } from './load-spec.js'
import { ensureWrk, runWrk } from './wrk.js'

/** Runs loads with wrk, or with autocannon when wrk cannot be had. */
export interface LoadGenerator {
  readonly name: 'wrk' | 'autocannon'
  /** Why it is not wrk; undefined when it is. */
  readonly fallbackReason: string | undefined
  /** One run of `spec`; the ids its counting body drew are taken from their sequence once it has ended. */
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

/** `spec` through autocannon, with the same figures as wrk's; a counting body's ids are taken from its sequence. */
export async function runAutocannonLoad (spec: LoadSpec): Promise<LoadResult> {
  const counting = countingRequestOf(spec)
  const first = counting?.countingBody.ids.next ?? 0
  // one counter for every connection: each builds its next request with setupRequest
  let counted = 0
  const requests = spec.requests.map((request): autocannon.Request => {
    const headers = request.body === undefined && request.countingBody === undefined ? { ...spec.headers } : { ...spec.headers, 'content-type': 'application/json' }
    const { randomIdRange: range, countingBody } = request
    if (range === undefined && countingBody === undefined) return { method: request.method, path: request.path, headers, body: request.body }
    return {
      method: request.method,
      headers,
      body: request.body,
      setupRequest: (r: autocannon.Request) => ({
        ...r,
        path: range === undefined ? request.path : `${request.path}${range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1))}`,
        ...(countingBody === undefined ? {} : { body: countedBody(countingBody, first + counted++) })
      })
    }
  })
  const result = await runAutocannon({ url: spec.origin, connections: spec.connections, duration: spec.durationSeconds, requests })
  counting?.countingBody.ids.take(counted)
  return {
    generator: 'autocannon',
    requests: result.requests.total,
    durationSeconds: result.duration,
    reqPerSec: result.requests.total / result.duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    countedIds: counted
  }
}
