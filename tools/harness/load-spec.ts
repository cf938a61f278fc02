/** One request of a load, sent with the load's headers. */
export interface LoadRequest {
  method: 'GET' | 'POST'
  path: string
  /** Each request's path is `path` followed by a random integer from this range (inclusive). */
  randomIdRange?: readonly [number, number]
  /** A JSON body (sent with `content-type: application/json`). */
  body?: string
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
}
