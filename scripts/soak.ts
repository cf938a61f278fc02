/**
 * Soak test: `npm run soak -- [--duration 60] [--connections 10] [--store sqlite|postgres]
 * [--max-growth-mb 50] [--warmup <s>] [--seed 200] [--log-level warn] [--json]`.
 *
 * Starts the real server (`node --import tsx src/bin/server.ts`, so what runs is the source as it is,
 * never a stale `dist/`) on a fresh store, seeds pets, then drives a mixed load through autocannon
 * for a bounded time: about 50 % lists, 15 % creates (each with its own Idempotency-Key), 15 %
 * reads of existing pets and 20 % bad requests (invalid body, no key, wrong key, unknown route, bad
 * limit, missing pet, wrong content type), each kind with the one status it must get; plus, on a
 * connection of its own at a bounded rate, malformed JSON, which the server answers with
 * `Connection: close`. Every request carries `X-Request-Id: soak.<kind>`, and responses are counted
 * by the id they echo. It reports requests, req/s, statuses per kind, connection errors and
 * timeouts, latency percentiles and the server's resident memory (RSS, read from /proc every
 * second) after the warm-up and at the end; then stops the server with SIGTERM,
 * which must exit 0.
 *
 * It fails (exit code 1) on any status other than the kind's expected one, any connection error or
 * timeout, an answer without its X-Request-Id or closing a connection it should keep, an RSS growth
 * after warm-up above `--max-growth-mb`, a line the server logged at error level, or a server that
 * does not exit 0.
 *
 * The server runs with LOG_LEVEL=warn by default: at info it writes a JSON line per request,
 * which over a long soak is gigabytes of output and measures pino more than the service. Its
 * stdout is read (and discarded) line by line; warnings and errors are counted and shown.
 * PostgreSQL (`--store postgres`) uses TEST_DATABASE_URL, else DATABASE_URL, and works in a
 * schema `petstore_soak_<hex>` created for the run and dropped after it; SQLite uses a file in a
 * temporary directory removed after the run.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type autocannon from 'autocannon'
import { runAutocannon } from '../tools/harness/autocannon.js'
import { childEnv } from '../tools/harness/child-env.js'
import { freePort } from '../tools/harness/free-port.js'
import type { Exit } from '../tools/harness/process-exit.js'
import { RssSampler, type RssSample } from '../tools/harness/rss-sampler.js'
import { scratchStore } from '../tools/harness/scratch-store.js'
import { ServerProcess } from '../tools/harness/server-process.js'

export type SoakStore = 'sqlite' | 'postgres'

export interface SoakOptions {
  /** Seconds of load (warm-up included). Default 60. */
  durationSeconds?: number
  /** Concurrent keep-alive connections. Default 10. */
  connections?: number
  /** Default `sqlite`. */
  store?: SoakStore
  /** PostgreSQL server to create the soak schema in; default TEST_DATABASE_URL, else DATABASE_URL. */
  postgresUrl?: string
  /** Most RSS growth (MB) allowed between the end of the warm-up and the end of the load. Default 50. */
  maxGrowthMb?: number
  /** Seconds of load before the memory baseline is taken; default 20 % of the duration, at least 5 s (2 s for runs under 25 s). */
  warmupSeconds?: number
  /** Pets created before the load starts. Default 200. */
  seedPets?: number
  /** The server's LOG_LEVEL. Default `warn`. */
  logLevel?: string
  /** Progress lines (starting, seeding, running…); silent by default. */
  log?: (line: string) => void
  /** Aborting stops the load early; the run then still reports, cleans up, and fails. */
  signal?: AbortSignal
}

export interface KindReport {
  expected: number
  total: number
  /** Statuses other than `expected`, with their counts. */
  unexpected: Record<string, number>
}

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
const DEFAULTS = { durationSeconds: 60, connections: 10, maxGrowthMb: 50, seedPets: 200, logLevel: 'warn' } as const
const STARTUP_TIMEOUT_MS = 30_000
/** The server's V8 old-space limit during a soak, in MB. */
export const SOAK_HEAP_MB = 128
// the server drains for at most 15 s after SIGTERM
const SHUTDOWN_TIMEOUT_MS = 20_000
const LOG_EXCERPT_LINES = 10
const UNEXPECTED_EXAMPLES = 10
/** A pet id no pet has: the largest the API accepts. */
const MISSING_PET_ID = Number.MAX_SAFE_INTEGER
const PET_STATUSES = ['available', 'pending', 'sold'] as const

/** The warm-up the options ask for, or 20 % of the duration (at least 5 s; 2 s for runs under 25 s), at most half the run. */
export function warmupSecondsFor (durationSeconds: number, requested?: number): number {
  const warmup = requested ?? Math.max(0.2 * durationSeconds, durationSeconds < 25 ? 2 : 5)
  return Math.min(warmup, durationSeconds / 2)
}

/** Drives the mixed load against a fresh server and store, and reports; never throws for a failed check, only for a run that could not happen. */
export async function runSoak (options: SoakOptions = {}): Promise<SoakReport> {
  const durationSeconds = options.durationSeconds ?? DEFAULTS.durationSeconds
  const connections = options.connections ?? DEFAULTS.connections
  const store = options.store ?? 'sqlite'
  const maxGrowthMb = options.maxGrowthMb ?? DEFAULTS.maxGrowthMb
  const seedPets = options.seedPets ?? DEFAULTS.seedPets
  const warmupSeconds = warmupSecondsFor(durationSeconds, options.warmupSeconds)
  const log = options.log ?? (() => {})
  if (!(durationSeconds >= 2)) throw new Error(`the duration must be at least 2 seconds, got ${durationSeconds}`)
  if (!(Number.isInteger(connections) && connections >= 1)) throw new Error(`connections must be a positive integer, got ${connections}`)
  if (!(maxGrowthMb >= 0)) throw new Error(`the allowed growth must be a number of MB, got ${maxGrowthMb}`)
  if (!(Number.isInteger(seedPets) && seedPets >= 1)) throw new Error(`the number of seeded pets must be a positive integer, got ${seedPets}`)

  const cleanups: Array<() => Promise<void>> = []
  try {
    const databaseUrl = await freshDatabase(store, options.postgresUrl, cleanups)
    const port = await freePort()
    const apiKey = `soak_${randomBytes(32).toString('base64url')}`
    const logLevels = new LogLevelCounter()
    const env = childEnv({
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PETSTORE_API_KEYS: apiKey,
      // the soak measures the service, not its limits: one key and one address send everything.
      // 10^6 failed authentications a minute is the most AUTH_FAILURE_LIMIT accepts; the wrongKey
      // kind (1 request in 40) stays far below it
      RATE_LIMIT_MAX: '0',
      AUTH_FAILURE_LIMIT: '1000000',
      LOG_LEVEL: options.logLevel ?? DEFAULTS.logLevel,
      // a bounded heap, so that RSS follows what is alive rather than how far V8 lets the heap grow
      // before collecting (Node 24 let it grow ~60 MB a minute under this load, uncapped, while its live
      // set stayed under 96 MB); a leak then fails the soak by exhausting it
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--max-old-space-size=${SOAK_HEAP_MB}`].filter((option) => option !== undefined && option !== '').join(' ')
    })
    // its stdout is read line by line and discarded: over a long soak, kept whole it would fill memory
    const server = new ServerProcess({ env, port, entry: 'source', stdout: (line) => { logLevels.read(line) }, label: 'the server' })
    cleanups.push(() => server.kill())
    const baseUrl = server.baseUrl
    log(`soak: server pid ${server.pid} on ${baseUrl} (${store})`)
    await server.waitUntilHealthy(STARTUP_TIMEOUT_MS)

    log(`soak: seeding ${seedPets} pets`)
    const seed = await seedStore(baseUrl, apiKey, seedPets)
    const mix = buildMix(apiKey, seed)

    log(`soak: ${durationSeconds} s of load on ${connections} connections, warm-up ${warmupSeconds} s`)
    const sampler = new RssSampler(() => server.processTree(), 1_000)
    const result = await runLoad(baseUrl, mix, durationSeconds, connections, options.signal)
    const samples = sampler.stop()

    log('soak: stopping the server (SIGTERM)')
    const exit = await server.stop(SHUTDOWN_TIMEOUT_MS)
    return buildReport({ store, connections, warmupSeconds, maxGrowthMb, interrupted: options.signal?.aborted ?? false, result, mix, samples, logLevels, exit })
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup()
      } catch (error) {
        log(`soak: cleanup failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Store and server

async function freshDatabase (store: SoakStore, postgresUrl: string | undefined, cleanups: Array<() => Promise<void>>): Promise<string> {
  const serverUrl = nonEmpty(postgresUrl) ?? nonEmpty(process.env.TEST_DATABASE_URL) ?? nonEmpty(process.env.DATABASE_URL)
  if (store === 'postgres' && (serverUrl === undefined || !/^postgres(ql)?:\/\//.test(serverUrl))) {
    throw new Error('--store postgres needs TEST_DATABASE_URL or DATABASE_URL set to a postgres:// URL of a server the soak may create a schema in')
  }
  const scratch = await scratchStore(store, 'soak', serverUrl)
  cleanups.push(scratch.drop)
  return scratch.url
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

/** Counts the server's log lines at warn and above (pino JSON on stdout) and keeps the first few. */
class LogLevelCounter {
  warnLines = 0
  errorLines = 0
  readonly excerpt: string[] = []

  read (line: string): void {
    if (line.trim() === '') return
    let level: unknown
    try {
      level = (JSON.parse(line) as { level?: unknown }).level
    } catch {
      level = undefined
    }
    // not JSON (a printed key, say) counts as nothing; pino levels: 40 warn, 50 error, 60 fatal
    if (typeof level !== 'number' || level < 40) return
    if (level >= 50) this.errorLines++
    else this.warnLines++
    if (this.excerpt.length < LOG_EXCERPT_LINES) this.excerpt.push(line.slice(0, 1_000))
  }
}

// ---------------------------------------------------------------------------------------------
// Seed and request mix

interface Seed {
  ids: number[]
  /** `/v1/pets?…&cursor=…`: the second page, as the first page's Link header gives it. */
  nextPagePath: string
}

async function seedStore (baseUrl: string, apiKey: string, count: number): Promise<Seed> {
  const ids: number[] = []
  let next = 0
  const createOne = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const response = await fetch(`${baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Seed ${i}`, categoryId: 1 + (i % 5), status: PET_STATUSES[i % PET_STATUSES.length] }),
        signal: AbortSignal.timeout(10_000)
      })
      const body = await response.text()
      if (response.status !== 201) throw new Error(`seeding: POST /v1/pets answered ${response.status}: ${body}`)
      ids.push((JSON.parse(body) as { id: number }).id)
    }
  }
  await Promise.all(Array.from({ length: 10 }, createOne))

  const response = await fetch(`${baseUrl}/v1/pets?limit=20`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(10_000) })
  await response.arrayBuffer()
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')
  if (response.status !== 200 || link?.[1] === undefined) throw new Error(`seeding: GET /v1/pets?limit=20 answered ${response.status} without a next link`)
  const nextPage = new URL(link[1])
  return { ids, nextPagePath: `${nextPage.pathname}${nextPage.search}` }
}

interface Kind {
  name: string
  expected: number
  /** Share of a cycle of the main connections' requests (weights are relative). */
  weight: number
  /**
   * Answered with `Connection: close` (Fastify closes the connection after any body-parser error).
   * autocannon 8 does not survive that: it reconnects without forgetting the request it had already
   * written on the closing socket, so every later response is matched to the request before it
   * (wrong `onResponse`, latencies measured from the wrong start). Such kinds therefore run on
   * {@link CLOSING_CONNECTIONS} connection(s) of their own, at most {@link CLOSING_RATE} requests a
   * second (about half are answered: each close loses the request already written), and count in
   * the statuses but not in the latency figures.
   */
  closesConnection?: boolean
  request: autocannon.Request
}

const CLOSING_CONNECTIONS = 1
const CLOSING_RATE = 40
/** Every request carries `X-Request-Id: soak.<kind>`; the echo tells which kind a response answers. */
const REQUEST_ID_PREFIX = 'soak.'

/** The request kinds, each with the status it must get, and per-kind counters filled by the load. */
class Mix {
  readonly kinds: Kind[]
  readonly counts = new Map<string, KindReport>()
  readonly unexpectedExamples: Array<{ kind: string, status: number, body: string }> = []
  /** Responses whose echoed X-Request-Id names another kind than the request autocannon matched them with. */
  misattributed = 0
  /** Responses without the X-Request-Id their request sent. */
  withoutRequestId = 0
  readonly #byName = new Map<string, Kind>()

  constructor (kinds: Kind[]) {
    this.kinds = kinds
    for (const kind of kinds) {
      this.counts.set(kind.name, { expected: kind.expected, total: 0, unexpected: {} })
      this.#byName.set(kind.name, kind)
    }
  }

  /** The response to a request of kind `sent` (as autocannon matched it). */
  record (sent: Kind, status: number, body: string, headers: autocannon.Request['headers']): void {
    const echoed = headers === undefined ? undefined : headerValue(headers, 'x-request-id')
    const answered = echoed?.startsWith(REQUEST_ID_PREFIX) === true ? this.#byName.get(echoed.slice(REQUEST_ID_PREFIX.length)) : undefined
    let kind = sent
    if (answered === undefined) this.withoutRequestId++
    else if (answered !== sent) {
      this.misattributed++
      kind = answered
    }
    const counts = this.counts.get(kind.name)
    if (counts === undefined) return
    counts.total++
    if (status === kind.expected) return
    counts.unexpected[status] = (counts.unexpected[status] ?? 0) + 1
    if (this.unexpectedExamples.length < UNEXPECTED_EXAMPLES) this.unexpectedExamples.push({ kind: kind.name, status, body: body.slice(0, 300) })
  }

  /**
   * One cycle of requests for a connection, the kinds interleaved by smooth weighted round-robin
   * (a list, a create, a list, a read, …) rather than in blocks. autocannon gives every
   * connection its own deep copy (functions kept), so `setupRequest` may vary each request.
   */
  requests (kinds: Kind[]): autocannon.Request[] {
    const slots = kinds.reduce((sum, kind) => sum + kind.weight, 0)
    const current = kinds.map(() => 0)
    const sequence: autocannon.Request[] = []
    for (let slot = 0; slot < slots; slot++) {
      let best = 0
      kinds.forEach((kind, index) => {
        current[index] = (current[index] ?? 0) + kind.weight
        if ((current[index] ?? 0) > (current[best] ?? 0)) best = index
      })
      current[best] = (current[best] ?? 0) - slots
      const kind = kinds[best] as Kind
      sequence.push({
        ...kind.request,
        onResponse: (status: number, body: string, _context: object, headers: autocannon.Request['headers']) => { this.record(kind, status, body, headers) }
      })
    }
    return sequence
  }
}

function headerValue (headers: NonNullable<autocannon.Request['headers']>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value
  }
  return undefined
}

function buildMix (apiKey: string, seed: Seed): Mix {
  const id = (kind: string): Record<string, string> => ({ 'x-request-id': `${REQUEST_ID_PREFIX}${kind}` })
  const auth = { authorization: `Bearer ${apiKey}` }
  const json = { ...auth, 'content-type': 'application/json' }
  let created = 0
  let statusTurn = 0
  let limitTurn = 0
  const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)] as T
  return new Mix([
    // lists: 50 % of the main connections' requests
    { name: 'list', expected: 200, weight: 8, request: { method: 'GET', path: '/v1/pets?limit=20', headers: { ...auth, ...id('list') } } },
    {
      name: 'listByStatus',
      expected: 200,
      weight: 8,
      request: {
        method: 'GET',
        headers: { ...auth, ...id('listByStatus') },
        setupRequest: (request) => ({ ...request, path: `/v1/pets?limit=20&status=${PET_STATUSES[statusTurn++ % PET_STATUSES.length] ?? 'available'}` })
      }
    },
    { name: 'listNextPage', expected: 200, weight: 4, request: { method: 'GET', path: seed.nextPagePath, headers: { ...auth, ...id('listNextPage') } } },
    // creates: 15 %, each with a new Idempotency-Key
    {
      name: 'create',
      expected: 201,
      weight: 6,
      request: {
        method: 'POST',
        path: '/v1/pets',
        setupRequest: (request) => {
          const n = created++
          return {
            ...request,
            headers: { ...json, ...id('create'), 'idempotency-key': randomUUID() },
            body: JSON.stringify({ name: `Soak ${n}`, categoryId: 1 + (n % 7), status: PET_STATUSES[n % PET_STATUSES.length] })
          }
        }
      }
    },
    // reads of existing pets (the deprecated getPet): 15 %
    {
      name: 'getPet',
      expected: 200,
      weight: 6,
      request: { method: 'GET', headers: { ...auth, ...id('getPet') }, setupRequest: (request) => ({ ...request, path: `/v1/pets/${pick(seed.ids)}` }) }
    },
    // bad requests: 20 %
    { name: 'invalidBody', expected: 400, weight: 1, request: { method: 'POST', path: '/v1/pets', headers: { ...json, ...id('invalidBody') }, body: JSON.stringify({ name: '', categoryId: 1 }) } },
    { name: 'noKey', expected: 401, weight: 1, request: { method: 'GET', path: '/v1/pets?limit=20', headers: id('noKey') } },
    {
      name: 'wrongKey',
      expected: 401,
      weight: 1,
      request: { method: 'GET', path: '/v1/pets?limit=20', headers: { authorization: `Bearer soak_wrong_${randomBytes(24).toString('base64url')}`, ...id('wrongKey') } }
    },
    { name: 'unknownRoute', expected: 404, weight: 1, request: { method: 'GET', path: '/v1/no-such-route', headers: { ...auth, ...id('unknownRoute') } } },
    {
      name: 'badLimit',
      expected: 400,
      weight: 2,
      request: { method: 'GET', headers: { ...auth, ...id('badLimit') }, setupRequest: (request) => ({ ...request, path: `/v1/pets?limit=${['0', '101', 'abc'][limitTurn++ % 3] ?? '0'}` }) }
    },
    { name: 'missingPet', expected: 404, weight: 1, request: { method: 'GET', path: `/v1/pets/${MISSING_PET_ID}`, headers: { ...auth, ...id('missingPet') } } },
    { name: 'wrongContentType', expected: 415, weight: 1, request: { method: 'POST', path: '/v1/pets', headers: { ...auth, ...id('wrongContentType'), 'content-type': 'text/plain' }, body: 'name=Rex' } },
    // answered 400 with Connection: close, so on a connection of its own (see Kind.closesConnection)
    {
      name: 'malformedJson',
      expected: 400,
      weight: 1,
      closesConnection: true,
      request: { method: 'POST', path: '/v1/pets', headers: { ...json, ...id('malformedJson') }, body: '{"name": "Rex", "categoryId": ' }
    }
  ])
}

// ---------------------------------------------------------------------------------------------
// Load and memory

interface LoadResult {
  /** The main connections: every kind that keeps its connection; the latency figures come from here. */
  main: autocannon.Result
  /** The connection(s) sending the kinds the server answers with Connection: close. */
  closing: autocannon.Result | undefined
}

async function runLoad (baseUrl: string, mix: Mix, durationSeconds: number, connections: number, signal: AbortSignal | undefined): Promise<LoadResult> {
  const closingKinds = mix.kinds.filter((kind) => kind.closesConnection === true)
  const [main, closing] = await Promise.all([
    runAutocannon({ url: baseUrl, connections, duration: durationSeconds, requests: mix.requests(mix.kinds.filter((kind) => kind.closesConnection !== true)) }, signal),
    closingKinds.length === 0
      ? undefined
      : runAutocannon({ url: baseUrl, connections: CLOSING_CONNECTIONS, connectionRate: CLOSING_RATE, duration: durationSeconds, requests: mix.requests(closingKinds) }, signal)
  ])
  return { main, closing }
}

// ---------------------------------------------------------------------------------------------
// Report

interface RunFacts {
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

function buildReport ({ store, connections, warmupSeconds, maxGrowthMb, interrupted, result, mix, samples, logLevels, exit }: RunFacts): SoakReport {
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

// ---------------------------------------------------------------------------------------------
// Command line

const USAGE = 'usage: npm run soak -- [--duration <s>=60] [--connections <n>=10] [--store sqlite|postgres] ' +
  '[--max-growth-mb <MB>=50] [--warmup <s>] [--seed <pets>=200] [--log-level <level>=warn] [--json]'

function numberOption (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new Error(`--${name} must be a non-negative number, got "${value}"`)
  return number
}

async function main (): Promise<number> {
  let options: SoakOptions
  let json: boolean
  try {
    const { values } = parseArgs({
      options: {
        duration: { type: 'string' },
        connections: { type: 'string' },
        store: { type: 'string' },
        'max-growth-mb': { type: 'string' },
        warmup: { type: 'string' },
        seed: { type: 'string' },
        'log-level': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false }
      }
    })
    if (values.help === true) {
      process.stdout.write(`${USAGE}\n`)
      return 0
    }
    if (values.store !== undefined && values.store !== 'sqlite' && values.store !== 'postgres') throw new Error(`--store must be sqlite or postgres, got "${values.store}"`)
    json = values.json === true
    options = {
      durationSeconds: numberOption('duration', values.duration),
      connections: numberOption('connections', values.connections),
      store: values.store,
      maxGrowthMb: numberOption('max-growth-mb', values['max-growth-mb']),
      warmupSeconds: numberOption('warmup', values.warmup),
      seedPets: numberOption('seed', values.seed),
      logLevel: values['log-level'],
      log: (line) => { process.stderr.write(`${line}\n`) }
    }
  } catch (error) {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`)
    return 2
  }

  // Ctrl-C stops the load; the run still stops the server and removes its store
  const interrupt = new AbortController()
  process.once('SIGINT', () => { interrupt.abort() })
  process.once('SIGTERM', () => { interrupt.abort() })

  const report = await runSoak({ ...options, signal: interrupt.signal })
  if (json) {
    process.stderr.write(`${formatReport(report)}\n`)
    process.stdout.write(`${JSON.stringify(report)}\n`)
  } else {
    process.stdout.write(`${formatReport(report)}\n`)
  }
  return report.ok ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then((code) => { process.exitCode = code }, (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
