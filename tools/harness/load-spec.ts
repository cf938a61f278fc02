import type { IdSequence } from './id-sequence.js'

/**
 * A JSON body that counts: `before`, an id, `after` (`{"petId": ` 1207 `}`), the id one more with every
 * request sent, across all the load's connections, drawn from `ids` (each run goes on where the last stopped).
 */
export interface CountingBody {
  before: string
  after: string
  ids: IdSequence
}

/** One request of a load, sent with the load's headers. */
export interface LoadRequest {
  method: 'GET' | 'POST' | 'PATCH'
  path: string
  /** Each request's path is `path` followed by a random integer from this range (inclusive). */
  randomIdRange?: readonly [number, number]
  /** A JSON body (sent with `content-type: application/json`). */
  body?: string
  /** A JSON body with a different id each time (instead of `body`); one request of a load at most has one. */
  countingBody?: CountingBody
}

/** What to send, to where, for how long. */
export interface LoadSpec {
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** Sent with every request. */
  headers: Readonly<Record<string, string>>
  /** Sent in turn, over and over (on each connection with autocannon; across the thread's connections with wrk). */
  requests: readonly LoadRequest[]
  connections: number
  durationSeconds: number
}

/** What one timed run of a load gave. */
export interface LoadResult {
  generator: 'wrk' | 'autocannon'
  /** Requests answered (of any status). */
  requests: number
  durationSeconds: number
  reqPerSec: number
  /** Latency percentiles, in ms. */
  latencyMs: { p50: number, p90: number, p99: number }
  /** Answers with a status outside 2xx/3xx. */
  non2xx: number
  /** Connection errors (connect, read, write), timeouts included. */
  errors: number
  timeouts: number
  /** Ids the counting body drew (sent, and possibly a few built and never sent); 0 without one. */
  countedIds: number
}

/** The load's request with a counting body; undefined when none has one. Throws when several have. */
export function countingRequestOf (spec: LoadSpec): (LoadRequest & { countingBody: CountingBody }) | undefined {
  const counting = spec.requests.filter((request): request is LoadRequest & { countingBody: CountingBody } => request.countingBody !== undefined)
  if (counting.length > 1) throw new Error('a load can have one request with a counting body at most')
  const [request] = counting
  if (request !== undefined && request.body !== undefined) throw new Error(`${request.method} ${request.path} has both a body and a counting body`)
  return request
}

/** A counting body with `id` in it. */
export function countedBody (body: CountingBody, id: number): string {
  return `${body.before}${id}${body.after}`
}
