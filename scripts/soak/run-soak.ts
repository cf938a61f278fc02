/** The soak's runner: a fresh store and server, the seed, the load and the memory samples, then the report. */
import { randomBytes } from 'node:crypto'
import { childEnv } from '../../tools/harness/child-env.js'
import { freePort } from '../../tools/harness/free-port.js'
import { RssSampler } from '../../tools/harness/rss-sampler.js'
import { scratchStore } from '../../tools/harness/scratch-store.js'
import { ServerProcess } from '../../tools/harness/server-process.js'
import { runLoad } from './load.js'
import { buildMix } from './request-mix.js'
import { seedStore } from './seed-store.js'
import { LogLevelCounter } from './server-log.js'
import { buildReport, type SoakReport, type SoakStore } from './soak-report.js'

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

const DEFAULTS = { durationSeconds: 60, connections: 10, maxGrowthMb: 50, seedPets: 200, logLevel: 'warn' } as const
const STARTUP_TIMEOUT_MS = 30_000
/** The server's V8 old-space limit during a soak, in MB. */
export const SOAK_HEAP_MB = 128
// the server drains for at most 15 s after SIGTERM
const SHUTDOWN_TIMEOUT_MS = 20_000

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
