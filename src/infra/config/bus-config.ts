import { ConfigError } from './config-error.js'

// The message-bus variables config.ts reads (its CONFIG_VARIABLES lists them), parsed and checked here.

/** The stream, subject prefix and exchange when their variables are unset: what the documentation and consumers name. */
export const DEFAULT_NATS_STREAM = 'PETSTORE_EVENTS'
export const DEFAULT_NATS_SUBJECT_PREFIX = 'petstore.events'
export const DEFAULT_AMQP_EXCHANGE = 'petstore.events'

/** NATS JetStream, when `NATS_URL` is set. */
export interface NatsBusSettings {
  /** `nats://[user:password@]host:port` (may hold a password: never log it). */
  readonly url: string
  /** The stream the events are stored in (`NATS_STREAM`), created when missing. */
  readonly stream: string
  /** Each event is published to `<prefix>.<type>` (`NATS_SUBJECT_PREFIX`); the stream holds `<prefix>.>`. */
  readonly subjectPrefix: string
  /** How long the stream keeps a message when the service creates it (`NATS_STREAM_MAX_AGE_DAYS`), in ms. */
  readonly streamMaxAgeMs: number
}

/** RabbitMQ (AMQP 0-9-1), when `AMQP_URL` is set. */
export interface AmqpBusSettings {
  /** `amqp://user:password@host:port[/vhost]` or `amqps://…` (may hold a password: never log it). */
  readonly url: string
  /** The durable topic exchange the events are published to (`AMQP_EXCHANGE`), routing key the event type. */
  readonly exchange: string
}

/** The message buses every event is relayed to; each undefined when its URL is unset. */
export interface BusSettings {
  readonly nats: NatsBusSettings | undefined
  readonly amqp: AmqpBusSettings | undefined
  /** Variables set without the URL they go with, so they do nothing (the server warns of each at start). */
  readonly ignored: readonly BusVariable[]
}

/** The variables of the buses, as CONFIG_VARIABLES lists them. */
export const BUS_VARIABLES = ['NATS_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'NATS_STREAM_MAX_AGE_DAYS', 'AMQP_URL', 'AMQP_EXCHANGE'] as const
type BusVariable = typeof BUS_VARIABLES[number]
type Env = Readonly<Partial<Record<BusVariable, string | undefined>>>

/** The variables that mean something only beside their bus's URL. */
const NEEDS_URL: Readonly<Record<'NATS_URL' | 'AMQP_URL', readonly BusVariable[]>> = {
  NATS_URL: ['NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'NATS_STREAM_MAX_AGE_DAYS'],
  AMQP_URL: ['AMQP_EXCHANGE']
}

function isUnset (value: string | undefined): value is undefined {
  return value === undefined || value.trim() === ''
}

// a JetStream stream name: no whitespace, '.', '*', '>', path separators
const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/
// dot-separated tokens without wildcards
const SUBJECT_PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/
const EXCHANGE_NAME = /^[A-Za-z0-9_.:-]{1,127}$/

/**
 * The buses from `NATS_*` and `AMQP_*` (`eventRetentionDays`: the stream's default maximum age); throws a ConfigError
 * naming the first variable that is wrong.
 */
export function parseBuses (env: Env, eventRetentionDays: number): BusSettings {
  const ignored = (Object.entries(NEEDS_URL) as Array<[BusVariable, readonly BusVariable[]]>)
    .flatMap(([url, variables]) => isUnset(env[url]) ? variables.filter((variable) => !isUnset(env[variable])) : [])
  return Object.freeze({ nats: parseNats(env, eventRetentionDays), amqp: parseAmqp(env), ignored: Object.freeze(ignored) })
}

/** The URL with its password hidden: what an error may echo. */
function withoutPassword (url: string): string {
  const start = url.indexOf('://') + 3
  if (start < 3) return url
  const end = url.slice(start).search(/[/?#]/)
  const authority = end < 0 ? url.slice(start) : url.slice(start, start + end)
  const at = authority.lastIndexOf('@')
  const colon = authority.indexOf(':')
  if (at < 0 || colon < 0 || colon > at) return url
  return `${url.slice(0, start + colon)}:***${url.slice(start + at)}`
}

/** A broker URL of one of `schemes` with a host; throws naming the variable and the value (its password hidden). */
function parseBrokerUrl (variable: BusVariable, value: string, schemes: readonly string[], form: string): string {
  const url = value.trim()
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined || !schemes.includes(parsed.protocol.slice(0, -1)) || parsed.hostname === '') {
    throw new ConfigError(variable, `must be ${form} with a host, got "${withoutPassword(url)}" (percent-encode special characters in the password)`)
  }
  return url
}

/** The longest `NATS_STREAM_MAX_AGE_DAYS`: ten years. */
const MAX_STREAM_AGE_DAYS = 3650

function parseNats (env: Env, eventRetentionDays: number): NatsBusSettings | undefined {
  if (isUnset(env.NATS_URL)) return undefined
  const url = parseBrokerUrl('NATS_URL', env.NATS_URL, ['nats', 'tls'], 'nats://[user:password@]host:port or tls://…')
  const stream = isUnset(env.NATS_STREAM) ? DEFAULT_NATS_STREAM : env.NATS_STREAM.trim()
  if (!STREAM_NAME.test(stream)) throw new ConfigError('NATS_STREAM', `must be 1 to 64 letters, digits, _ or -, got "${stream}"`)
  const subjectPrefix = isUnset(env.NATS_SUBJECT_PREFIX) ? DEFAULT_NATS_SUBJECT_PREFIX : env.NATS_SUBJECT_PREFIX.trim()
  if (!SUBJECT_PREFIX.test(subjectPrefix)) throw new ConfigError('NATS_SUBJECT_PREFIX', `must be dot-separated tokens of letters, digits, _ or - without wildcards, got "${subjectPrefix}"`)
  const maxAge = isUnset(env.NATS_STREAM_MAX_AGE_DAYS) ? eventRetentionDays : Number(env.NATS_STREAM_MAX_AGE_DAYS.trim())
  if (!Number.isInteger(maxAge) || maxAge < 1 || maxAge > MAX_STREAM_AGE_DAYS) {
    throw new ConfigError('NATS_STREAM_MAX_AGE_DAYS', `must be a whole number of days from 1 to ${MAX_STREAM_AGE_DAYS}, got "${env.NATS_STREAM_MAX_AGE_DAYS ?? ''}"`)
  }
  return Object.freeze({ url, stream, subjectPrefix, streamMaxAgeMs: maxAge * 86_400_000 })
}

function parseAmqp (env: Env): AmqpBusSettings | undefined {
  if (isUnset(env.AMQP_URL)) return undefined
  const url = parseBrokerUrl('AMQP_URL', env.AMQP_URL, ['amqp', 'amqps'], 'amqp://user:password@host:port[/vhost] or amqps://…')
  const exchange = isUnset(env.AMQP_EXCHANGE) ? DEFAULT_AMQP_EXCHANGE : env.AMQP_EXCHANGE.trim()
  if (!EXCHANGE_NAME.test(exchange) || exchange.startsWith('amq.')) throw new ConfigError('AMQP_EXCHANGE', `must be 1 to 127 letters, digits, _ . : or -, not starting with amq., got "${exchange}"`)
  return Object.freeze({ url, exchange })
}
