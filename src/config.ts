import { isAbsolute, resolve } from 'node:path'

/** Where the catalogue lives, parsed from `DATABASE_URL`. */
export type DatabaseLocation =
  | { readonly kind: 'sqlite', readonly path: string }
  | { readonly kind: 'sqlite-memory' }

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/** Every setting of the service, parsed once from the environment and frozen. */
export interface Config {
  readonly port: number
  readonly host: string
  readonly database: DatabaseLocation
  /** Bearer keys from `PETSTORE_API_KEYS`, accepted besides the keys in the store. */
  readonly apiKeys: readonly string[]
  /** Production base address, ending in `/v1`, without a trailing slash. */
  readonly publicBaseUrl: string
  /** Staging base address, ending in `/v1`, when configured. */
  readonly stagingBaseUrl: string | undefined
  readonly logLevel: LogLevel
}

/** A setting is missing or wrong; the message names the variable. */
export class ConfigError extends Error {
  constructor (readonly variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Readonly<Record<string, string | undefined>>

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const DEFAULT_DATABASE_URL = 'sqlite:./data/petstore.db'
// RFC 6750 b64token: what may follow "Bearer " in an Authorization header
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/**
 * Reads and validates every environment variable the service uses.
 * Throws a {@link ConfigError} naming the first variable that is wrong.
 */
export function loadConfig (env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = parsePort(env.PORT)
  const host = parseHost(env.HOST)
  return Object.freeze({
    port,
    host,
    database: parseDatabaseUrl(env.DATABASE_URL, cwd),
    apiKeys: Object.freeze(parseApiKeys(env.PETSTORE_API_KEYS)),
    publicBaseUrl: parseBaseUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL) ??
      `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : formatHost(host)}:${port}/v1`,
    stagingBaseUrl: parseBaseUrl('STAGING_BASE_URL', env.STAGING_BASE_URL),
    logLevel: parseLogLevel(env.LOG_LEVEL)
  })
}

function isUnset (value: string | undefined): value is undefined {
  return value === undefined || value.trim() === ''
}

function parsePort (value: string | undefined): number {
  if (isUnset(value)) return 8080
  if (!/^\d+$/.test(value.trim())) throw new ConfigError('PORT', `must be an integer from 0 to 65535, got "${value}"`)
  const port = Number(value)
  if (port > 65535) throw new ConfigError('PORT', `must be an integer from 0 to 65535, got "${value}"`)
  return port
}

function parseHost (value: string | undefined): string {
  if (isUnset(value)) return '127.0.0.1'
  const host = value.trim()
  if (/[\s/?#@]/.test(host)) throw new ConfigError('HOST', `must be a host name or IP address, got "${value}"`)
  return host
}

function formatHost (host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

function parseDatabaseUrl (value: string | undefined, cwd: string): DatabaseLocation {
  const url = isUnset(value) ? DEFAULT_DATABASE_URL : value.trim()
  if (url === 'sqlite::memory:') return { kind: 'sqlite-memory' }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') throw new ConfigError('DATABASE_URL', 'must name a file after "sqlite:", e.g. sqlite:./data/petstore.db')
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(cwd, path) }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError('DATABASE_URL', 'postgres:// is not supported by this version yet; use sqlite:<path> or sqlite::memory:')
  }
  throw new ConfigError('DATABASE_URL', `must be sqlite:<path> or sqlite::memory:, got "${url}"`)
}

function parseApiKeys (value: string | undefined): string[] {
  if (isUnset(value)) return []
  const keys = value.split(',').map((key) => key.trim())
  keys.forEach((key, index) => {
    if (key === '') throw new ConfigError('PETSTORE_API_KEYS', `has an empty key at position ${index + 1}`)
    if (!BEARER_TOKEN.test(key)) {
      throw new ConfigError('PETSTORE_API_KEYS', `key at position ${index + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`)
    }
  })
  return [...new Set(keys)]
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
