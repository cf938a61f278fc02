import { isAbsolute, join, resolve } from 'node:path'
import { BEARER_TOKEN } from '../credentials/credentials.js'
import { ConfigError } from './config-error.js'
import { parseNetworks } from './networks.js'
import { INSTALL_ROOT } from '../runtime/install-root.js'
import { parseTracing, type TraceSampler, type TracingSettings } from './otel-config.js'
import { BUS_VARIABLES, parseBuses, type BusSettings } from './bus-config.js'
import { EVENT_STREAM_VARIABLES, parseEventStreams, type EventStreamSettings } from './event-stream-config.js'

/** How long SQLite waits for another connection's write lock before the request gets a 503. */
export const SQLITE_BUSY_TIMEOUT_MS = 250

/** Where the catalogue lives, parsed from `DATABASE_URL`. */
export type DatabaseLocation =
  | { readonly kind: 'sqlite', readonly path: string }
  | { readonly kind: 'sqlite-memory' }
  | PostgresLocation

/** A PostgreSQL server shared by every instance, with this instance's pool settings. */
export interface PostgresLocation {
  readonly kind: 'postgres'
  /** The connection string as given (it may hold a password: never log it). */
  readonly url: string
  /** Most connections this instance opens (`DATABASE_POOL_SIZE`). */
  readonly poolSize: number
  /** Longest wait for a connection, and separately for one query (`DATABASE_TIMEOUT_MS`). */
  readonly timeoutMs: number
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/** Every setting of the service, parsed once from the environment and frozen. */
export interface Config {
  readonly port: number
  readonly host: string
  readonly database: DatabaseLocation
  /** The one directory the service writes to (`DATA_DIR`): the default SQLite file lives in it. */
  readonly dataDir: string
  /** Bearer keys from `PETSTORE_API_KEYS`, accepted besides the keys in the store, with the write role. */
  readonly apiKeys: readonly string[]
  /** Bearer keys from `PETSTORE_READ_API_KEYS`: accepted for the operations that only read. */
  readonly readApiKeys: readonly string[]
  /** Bearer keys from `PETSTORE_ADMIN_API_KEYS`: accepted for every operation, the admin-only ones too. */
  readonly adminApiKeys: readonly string[]
  /** Production base address, ending in `/v1`, without a trailing slash. */
  readonly publicBaseUrl: string
  /** Staging base address, ending in `/v1`, when configured. */
  readonly stagingBaseUrl: string | undefined
  readonly logLevel: LogLevel
  /**
   * How long a successful key look-up is reused before the store is asked again:
   * the longest a revoked key keeps working on an instance (`API_KEY_CACHE_SECONDS`).
   */
  readonly apiKeyCacheMs: number
  /** Requests one API key may make per window (`RATE_LIMIT_MAX`); 0 turns per-key limiting off. */
  readonly rateLimitMax: number
  /** The rate-limit window in milliseconds (`RATE_LIMIT_WINDOW`, given in seconds). */
  readonly rateLimitWindowMs: number
  /** Failed authentications one client address may make per minute (`AUTH_FAILURE_LIMIT`). */
  readonly authFailureLimit: number
  /** Shared rate-limit counters (`REDIS_URL`); each instance counts alone when unset. */
  readonly redisUrl: string | undefined
  /** Browser origins allowed to call the API (`CORS_ORIGINS`); empty: CORS off. `*` allows any. */
  readonly corsOrigins: readonly string[]
  /** Port of the Prometheus metrics listener (`METRICS_PORT`); undefined: no metrics listener. */
  readonly metricsPort: number | undefined
  /** Which proxies to believe about the client address (`TRUST_PROXY`), as Fastify's `trustProxy`. */
  readonly trustProxy: boolean | number | string
  /** Processes serving the port (`WORKERS`, node:cluster); 1: this process alone. */
  readonly workers: number
  /** Where to export OpenTelemetry traces; undefined (the default): tracing is off and none of it is loaded. */
  readonly tracing: TracingSettings | undefined
  /** How long the change feed keeps an event before retention deletes it (`EVENT_RETENTION_DAYS`), in days. */
  readonly eventRetentionDays: number
  /** The bounds of the streaming feed (`EVENT_STREAM_*`, event-stream-config.ts). */
  readonly eventStreams: EventStreamSettings
  /** How webhooks are delivered (`WEBHOOK_*`). */
  readonly webhooks: WebhookSettings
  /** When new requests are answered 503 `overloaded` at once (`OVERLOAD_*`). */
  readonly overload: OverloadSettings
  /** The message buses every event is relayed to (`NATS_*`, `AMQP_*`), each off while its URL is unset. */
  readonly buses: BusSettings
}

/** Load shedding, from the `OVERLOAD_*` variables (docs/operations.md says why these bounds). */
export interface OverloadSettings {
  /** False (`OVERLOAD_SHEDDING=false`): no request is ever shed and `/readyz` ignores the event loop. */
  readonly shedding: boolean
  /** Mean event-loop delay over a sample past which the instance sheds (`OVERLOAD_MAX_EVENT_LOOP_DELAY_MS`); 0: not checked. */
  readonly maxEventLoopDelayMs: number
  /** Event-loop utilisation over a sample, 0 to 1, past which it sheds (`OVERLOAD_MAX_EVENT_LOOP_UTILIZATION`, in percent); 0: not checked. */
  readonly maxEventLoopUtilization: number
  /** Connections waiting in the kernel's accept queue past which it sheds and closes (`OVERLOAD_MAX_ACCEPT_QUEUE`); 0: not checked. */
  readonly maxAcceptQueue: number
}

/** Webhook delivery, from the `WEBHOOK_*` variables. */
export interface WebhookSettings {
  /** Longest an attempt may take, connection to answer (`WEBHOOK_TIMEOUT_MS`). */
  readonly timeoutMs: number
  /** The delays before each retry (`WEBHOOK_RETRY_SCHEDULE`), in ms; after the last, a delivery is given up. */
  readonly retryScheduleMs: readonly number[]
  /** Most endpoints one instance delivers to at once (`WEBHOOK_CONCURRENCY`), besides as many whose attempts are slow. */
  readonly concurrency: number
  /** Most deliveries in flight to one endpoint at once (`WEBHOOK_ENDPOINT_CONCURRENCY`); 1 keeps an endpoint's deliveries in event-id order. */
  readonly endpointConcurrency: number
  /** The fallback look for due work, in ms (`WEBHOOK_POLL_INTERVAL_MS`): commits wake delivery at once; this finds retries coming due and leases ended. */
  readonly pollIntervalMs: number
  /** `http:` URLs allowed besides `https:` (`WEBHOOK_ALLOW_HTTP`): for tests and closed networks only. */
  readonly allowHttp: boolean
  /** Every address allowed, special-purpose and this host's own included (`WEBHOOK_ALLOW_PRIVATE_NETWORKS`): tests and closed networks only. */
  readonly allowPrivateNetworks: boolean
  /** Networks (CIDR) a webhook may reach although special-purpose or this host's (`WEBHOOK_ALLOWED_NETWORKS`). */
  readonly allowedNetworks: readonly string[]
}

export type { BusSettings, EventStreamSettings, TraceSampler, TracingSettings }

/** The most worker processes `WORKERS` may ask for. */
export const MAX_WORKERS = 64

/**
 * The longest a request waits on an unreachable or locked store before it is answered 503:
 * PostgreSQL waits up to the timeout for a connection, then up to the timeout for the query.
 */
export function storeWaitBoundMs (database: DatabaseLocation): number {
  return database.kind === 'postgres' ? 2 * database.timeoutMs : SQLITE_BUSY_TIMEOUT_MS
}

export { ConfigError }

/** Every environment variable the service reads; tests and tools clear them for the processes they start. */
export const CONFIG_VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'DATABASE_URL', 'DATABASE_POOL_SIZE', 'DATABASE_TIMEOUT_MS', 'PETSTORE_API_KEYS', 'PETSTORE_READ_API_KEYS', 'PETSTORE_ADMIN_API_KEYS', 'PUBLIC_BASE_URL',
  'STAGING_BASE_URL', 'LOG_LEVEL', 'API_KEY_CACHE_SECONDS', 'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW', 'AUTH_FAILURE_LIMIT',
  'REDIS_URL', 'CORS_ORIGINS', 'METRICS_PORT', 'TRUST_PROXY', 'WORKERS', 'EVENT_RETENTION_DAYS',
  'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_ENDPOINT_CONCURRENCY', 'WEBHOOK_POLL_INTERVAL_MS', 'WEBHOOK_ALLOW_HTTP',
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_ALLOWED_NETWORKS',
  ...EVENT_STREAM_VARIABLES, ...BUS_VARIABLES,
  'OVERLOAD_SHEDDING', 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', 'OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', 'OVERLOAD_MAX_ACCEPT_QUEUE',
  // OpenTelemetry's standard variables that turn tracing on or are checked here; the SDK reads its other OTEL_* itself
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_SDK_DISABLED', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'
] as const
export type ConfigVariable = typeof CONFIG_VARIABLES[number]

// only the listed variables can be read: a new one must join the list
type Env = Readonly<Partial<Record<ConfigVariable, string | undefined>>>

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
/** `DATA_DIR` when unset, relative to the installation. */
export const DEFAULT_DATA_DIR = './data'
/** The SQLite file in `DATA_DIR` that is the store when `DATABASE_URL` is unset. */
export const DEFAULT_DATABASE_FILE = 'petstore.db'
/** The store when neither `DATABASE_URL` nor `DATA_DIR` is set, as messages show it. */
export const DEFAULT_DATABASE_URL = `sqlite:${DEFAULT_DATA_DIR}/${DEFAULT_DATABASE_FILE}`
/** The installation's root, against which a relative SQLite path or `DATA_DIR` is resolved (install-root.ts). */
export { INSTALL_ROOT }
const DEFAULT_POOL_SIZE = 10
const DEFAULT_DATABASE_TIMEOUT_MS = 2000
/** `API_KEY_CACHE_SECONDS` by engine: PostgreSQL is a network hop away, so its look-ups are worth caching; SQLite's take microseconds. */
export const DEFAULT_KEY_CACHE_SECONDS = { postgres: 5, sqlite: 0 } as const
const MAX_KEY_CACHE_SECONDS = 10
// about 100 requests a second per key, averaged over a minute: far above what a well-behaved client needs
const DEFAULT_RATE_LIMIT_MAX = 6000
const DEFAULT_RATE_LIMIT_WINDOW_SECONDS = 60
// a person mistyping a key needs a few tries; a guesser needs billions
const DEFAULT_AUTH_FAILURE_LIMIT = 20
/** `EVENT_RETENTION_DAYS`: a consumer that was down for a month can still catch up from the feed. */
export const DEFAULT_EVENT_RETENTION_DAYS = 30
/** The longest `EVENT_RETENTION_DAYS`: ten years. */
export const MAX_EVENT_RETENTION_DAYS = 3650
const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000
const DEFAULT_WEBHOOK_CONCURRENCY = 8
const DEFAULT_WEBHOOK_POLL_INTERVAL_MS = 250
// a receiver answering in 50 ms then takes 16 / 0.05 s = 320 deliveries/s, above the 200/s a burst of creates commits
const DEFAULT_WEBHOOK_ENDPOINT_CONCURRENCY = 16
/** `WEBHOOK_RETRY_SCHEDULE`: retries over about 3.3 days, so the last one comes after an endpoint failing throughout was disabled (3 days). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h,14h,14h,24h'
const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
/** `OVERLOAD_MAX_EVENT_LOOP_DELAY_MS`: a client waits about this long per turn of the loop (docs/operations.md). */
export const DEFAULT_OVERLOAD_MAX_EVENT_LOOP_DELAY_MS = 100
/** `OVERLOAD_MAX_ACCEPT_QUEUE`: new connections waiting for the loop, one accepted per turn (docs/operations.md). */
export const DEFAULT_OVERLOAD_MAX_ACCEPT_QUEUE = 64
// a retry later than a week would outlive any receiver's interest (and the default event retention's margin)
const MAX_RETRY_DELAY_MS = 7 * 86_400_000

/**
 * Reads and validates every environment variable the service uses; a relative `sqlite:` path or `DATA_DIR` is
 * resolved against `root` (the installation's, {@link INSTALL_ROOT}). Throws a {@link ConfigError} naming the first variable that is wrong.
 */
export function loadConfig (env: Env = process.env, root: string = INSTALL_ROOT): Config {
  const port = parseInteger('PORT', env.PORT, 0, 65535) ?? 8080
  const host = parseHost(env.HOST)
  const dataDir = parseDataDir(env.DATA_DIR, root)
  const database = parseDatabaseUrl(env, root, dataDir)
  const apiKeys = parseApiKeys('PETSTORE_API_KEYS', env.PETSTORE_API_KEYS)
  const readApiKeys = parseRoleApiKeys('PETSTORE_READ_API_KEYS', env.PETSTORE_READ_API_KEYS, { PETSTORE_API_KEYS: apiKeys })
  const eventRetentionDays = parseInteger('EVENT_RETENTION_DAYS', env.EVENT_RETENTION_DAYS, 1, MAX_EVENT_RETENTION_DAYS) ?? DEFAULT_EVENT_RETENTION_DAYS
  return Object.freeze({
    port,
    host,
    database,
    dataDir,
    apiKeys: Object.freeze(apiKeys),
    readApiKeys: Object.freeze(readApiKeys),
    adminApiKeys: Object.freeze(parseRoleApiKeys('PETSTORE_ADMIN_API_KEYS', env.PETSTORE_ADMIN_API_KEYS, { PETSTORE_API_KEYS: apiKeys, PETSTORE_READ_API_KEYS: readApiKeys })),
    publicBaseUrl: parseBaseUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL) ??
      `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : formatHost(host)}:${port}/v1`,
    stagingBaseUrl: parseBaseUrl('STAGING_BASE_URL', env.STAGING_BASE_URL),
    logLevel: parseLogLevel(env.LOG_LEVEL),
    apiKeyCacheMs: 1000 * (parseInteger('API_KEY_CACHE_SECONDS', env.API_KEY_CACHE_SECONDS, 0, MAX_KEY_CACHE_SECONDS) ??
      DEFAULT_KEY_CACHE_SECONDS[database.kind === 'postgres' ? 'postgres' : 'sqlite']),
    rateLimitMax: parseInteger('RATE_LIMIT_MAX', env.RATE_LIMIT_MAX, 0, 1_000_000_000) ?? DEFAULT_RATE_LIMIT_MAX,
    rateLimitWindowMs: 1000 * (parseInteger('RATE_LIMIT_WINDOW', env.RATE_LIMIT_WINDOW, 1, 86_400) ?? DEFAULT_RATE_LIMIT_WINDOW_SECONDS),
    authFailureLimit: parseInteger('AUTH_FAILURE_LIMIT', env.AUTH_FAILURE_LIMIT, 1, 1_000_000) ?? DEFAULT_AUTH_FAILURE_LIMIT,
    redisUrl: parseRedisUrl(env.REDIS_URL),
    corsOrigins: Object.freeze(parseCorsOrigins(env.CORS_ORIGINS)),
    metricsPort: parseMetricsPort(env.METRICS_PORT, port),
    workers: parseWorkers(env.WORKERS, database),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    tracing: parseTracing(env),
    eventRetentionDays,
    eventStreams: parseEventStreams(env, parseInteger),
    webhooks: Object.freeze({
      timeoutMs: parseInteger('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 100, 60_000) ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      retryScheduleMs: Object.freeze(parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE)),
      concurrency: parseInteger('WEBHOOK_CONCURRENCY', env.WEBHOOK_CONCURRENCY, 1, 256) ?? DEFAULT_WEBHOOK_CONCURRENCY,
      endpointConcurrency: parseInteger('WEBHOOK_ENDPOINT_CONCURRENCY', env.WEBHOOK_ENDPOINT_CONCURRENCY, 1, 64) ?? DEFAULT_WEBHOOK_ENDPOINT_CONCURRENCY,
      pollIntervalMs: parseInteger('WEBHOOK_POLL_INTERVAL_MS', env.WEBHOOK_POLL_INTERVAL_MS, 10, 600_000) ?? DEFAULT_WEBHOOK_POLL_INTERVAL_MS,
      allowHttp: parseBoolean('WEBHOOK_ALLOW_HTTP', env.WEBHOOK_ALLOW_HTTP),
      allowPrivateNetworks: parseBoolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', env.WEBHOOK_ALLOW_PRIVATE_NETWORKS),
      allowedNetworks: Object.freeze(parseNetworks('WEBHOOK_ALLOWED_NETWORKS', env.WEBHOOK_ALLOWED_NETWORKS))
    }),
    overload: Object.freeze({
      shedding: isUnset(env.OVERLOAD_SHEDDING) || parseBoolean('OVERLOAD_SHEDDING', env.OVERLOAD_SHEDDING),
      maxEventLoopDelayMs: parseInteger('OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', env.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS, 0, 60_000) ?? DEFAULT_OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: (parseInteger('OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', env.OVERLOAD_MAX_EVENT_LOOP_UTILIZATION, 0, 100) ?? 0) / 100,
      maxAcceptQueue: parseInteger('OVERLOAD_MAX_ACCEPT_QUEUE', env.OVERLOAD_MAX_ACCEPT_QUEUE, 0, 65_535) ?? DEFAULT_OVERLOAD_MAX_ACCEPT_QUEUE
    }),
    buses: parseBuses(env, eventRetentionDays)
  })
}

const isUnset = (value: string | undefined): value is undefined => value === undefined || value.trim() === ''

function parseHost (value: string | undefined): string {
  if (isUnset(value)) return '127.0.0.1'
  const host = value.trim()
  if (/[\s/?#@]/.test(host)) throw new ConfigError('HOST', `must be a host name or IP address, got "${value}"`)
  return host
}

const formatHost = (host: string): string => host.includes(':') ? `[${host}]` : host

function parseWorkers (value: string | undefined, database: DatabaseLocation): number {
  const workers = parseInteger('WORKERS', value, 1, MAX_WORKERS) ?? 1
  if (workers > 1 && database.kind === 'sqlite-memory') {
    throw new ConfigError('WORKERS', `is ${workers}, but DATABASE_URL=sqlite::memory: is private to each process; use a SQLite file or PostgreSQL`)
  }
  return workers
}

/** An integer setting within [min, max], or undefined when unset. */
function parseInteger (variable: string, value: string | undefined, min: number, max: number): number | undefined {
  if (isUnset(value)) return undefined
  const number = /^\d+$/.test(value.trim()) ? Number(value) : NaN
  if (!(number >= min && number <= max)) throw new ConfigError(variable, `must be an integer from ${min} to ${max}, got "${value}"`)
  return number
}

function parseBoolean (variable: string, value: string | undefined): boolean {
  if (isUnset(value)) return false
  const setting = value.trim().toLowerCase()
  if (setting !== 'true' && setting !== 'false') throw new ConfigError(variable, `must be true or false, got "${value}"`)
  return setting === 'true'
}

/** Durations such as `5s,30s,2m,1h,1d` (each 1 ms to 7 days, at most 20), in ms. */
function parseRetrySchedule (value: string | undefined): number[] {
  const text = isUnset(value) ? DEFAULT_WEBHOOK_RETRY_SCHEDULE : value
  const delays = text.split(',').map((item) => {
    const match = /^\s*(\d{1,9})(ms|s|m|h|d)\s*$/.exec(item)
    const ms = match === null ? NaN : Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS]
    if (!(ms >= 1 && ms <= MAX_RETRY_DELAY_MS)) {
      throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be comma-separated durations of 1ms to 7d such as ${DEFAULT_WEBHOOK_RETRY_SCHEDULE} (units ms, s, m, h, d), got "${item.trim()}"`)
    }
    return ms
  })
  if (delays.length > 20) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `has ${delays.length} retries; at most 20`)
  return delays
}

function parseDataDir (value: string | undefined, root: string): string {
  if (isUnset(value)) return resolve(root, DEFAULT_DATA_DIR)
  const dir = value.trim()
  if (dir.includes('\0')) throw new ConfigError('DATA_DIR', 'must be a directory path')
  return isAbsolute(dir) ? resolve(dir) : resolve(root, dir)
}

function parseDatabaseUrl (env: Env, root: string, dataDir: string): DatabaseLocation {
  // validated whatever the store, so a typo is caught before the day the store changes
  const poolSize = parseInteger('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE, 1, 1000) ?? DEFAULT_POOL_SIZE
  const timeoutMs = parseInteger('DATABASE_TIMEOUT_MS', env.DATABASE_TIMEOUT_MS, 100, 60_000) ?? DEFAULT_DATABASE_TIMEOUT_MS
  if (isUnset(env.DATABASE_URL)) return { kind: 'sqlite', path: join(dataDir, DEFAULT_DATABASE_FILE) }
  const url = env.DATABASE_URL.trim()
  if (url === 'sqlite::memory:') return { kind: 'sqlite-memory' }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') throw new ConfigError('DATABASE_URL', 'must name a file after "sqlite:", e.g. sqlite:./data/petstore.db')
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(root, path) }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!URL.canParse(url)) throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL (percent-encode special characters in the password)')
    return { kind: 'postgres', url, poolSize, timeoutMs }
  }
  // the value is not echoed: it may be a connection string with a password
  throw new ConfigError('DATABASE_URL', 'must be sqlite:<path>, sqlite::memory: or postgres://user:password@host:port/database')
}

function parseApiKeys (variable: string, value: string | undefined): string[] {
  if (isUnset(value)) return []
  const keys = value.split(',').map((key) => key.trim())
  keys.forEach((key, index) => {
    if (key === '') throw new ConfigError(variable, `has an empty key at position ${index + 1}`)
    if (!BEARER_TOKEN.test(key)) {
      throw new ConfigError(variable, `key at position ${index + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`)
    }
  })
  return [...new Set(keys)]
}

/** The keys of `variable`, none of which may be in one of the lists of `others` (by variable). */
function parseRoleApiKeys (variable: string, value: string | undefined, others: Readonly<Record<string, readonly string[]>>): string[] {
  const keys = parseApiKeys(variable, value)
  // one key with two roles would make the role depend on which list is checked first
  for (const [other, otherKeys] of Object.entries(others)) {
    const both = keys.findIndex((key) => otherKeys.includes(key))
    if (both !== -1) throw new ConfigError(variable, `key at position ${both + 1} is also in ${other}; give each key one role`)
  }
  return keys
}

function parseBaseUrl (variable: string, value: string | undefined): string | undefined {
  if (isUnset(value)) return undefined
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    throw new ConfigError(variable, `must be an absolute http(s) URL ending in /v1, got "${value}"`)
  }
  const path = url.pathname.replace(/\/+$/, '')
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !path.endsWith('/v1') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(variable, `must be an absolute http(s) URL ending in /v1, got "${value}"`)
  }
  return `${url.origin}${path}`
}

function parseLogLevel (value: string | undefined): LogLevel {
  if (isUnset(value)) return 'info'
  const level = value.trim().toLowerCase()
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`)
  }
  return level as LogLevel
}

function parseRedisUrl (value: string | undefined): string | undefined {
  if (isUnset(value)) return undefined
  const url = value.trim()
  // the value is not echoed: it may carry a password
  if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) {
    throw new ConfigError('REDIS_URL', 'must be redis://[user:password@]host:port[/db] or rediss://… (percent-encode special characters in the password)')
  }
  return url
}

function parseCorsOrigins (value: string | undefined): string[] {
  if (isUnset(value)) return []
  const origins = value.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  for (const origin of origins) {
    if (origin === '*') continue
    // an origin is scheme://host[:port] exactly, as browsers send it in the Origin header
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new ConfigError('CORS_ORIGINS', `must be a comma-separated list of origins like https://app.example.com (scheme, host and port only) or *, got "${origin}"`)
    }
  }
  return [...new Set(origins)]
}

function parseMetricsPort (value: string | undefined, apiPort: number): number | undefined {
  const port = parseInteger('METRICS_PORT', value, 0, 65535)
  if (port !== undefined && port !== 0 && port === apiPort) throw new ConfigError('METRICS_PORT', `must differ from PORT (${apiPort}): metrics are served on their own listener`)
  return port
}

function parseTrustProxy (value: string | undefined): boolean | number | string {
  if (isUnset(value)) return false
  const setting = value.trim()
  if (setting === 'true') return true
  if (setting === 'false') return false
  if (/^\d+$/.test(setting)) return Number(setting)
  // addresses or CIDR ranges of the proxies, comma-separated
  if (/^[0-9a-fA-F:.,/\s]+$/.test(setting)) return setting
  throw new ConfigError('TRUST_PROXY', `must be true, false, a number of proxy hops, or a comma-separated list of proxy addresses/CIDR ranges, got "${value}"`)
}
