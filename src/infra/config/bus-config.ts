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
}

/** The variables of the buses, as CONFIG_VARIABLES lists them. */
export const BUS_VARIABLES = ['NATS_URL', 'NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'AMQP_URL', 'AMQP_EXCHANGE'] as const
type BusVariable = typeof BUS_VARIABLES[number]
type Env = Readonly<Partial<Record<BusVariable, string | undefined>>>

function isUnset (value: string | undefined): value is undefined {
  return value === undefined || value.trim() === ''
}

// a JetStream stream name: no whitespace, '.', '*', '>', path separators
const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/
// dot-separated tokens without wildcards
const SUBJECT_PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/
const EXCHANGE_NAME = /^[A-Za-z0-9_.:-]{1,127}$/

/** The buses from `NATS_*` and `AMQP_*`; throws a ConfigError naming the first variable that is wrong. */
export function parseBuses (env: Env): BusSettings {
  return Object.freeze({ nats: parseNats(env), amqp: parseAmqp(env) })
}

function parseNats (env: Env): NatsBusSettings | undefined {
  if (isUnset(env.NATS_URL)) return undefined
  const url = env.NATS_URL.trim()
  // the value is not echoed: it may carry a password
  if (!/^(nats|tls):\/\//.test(url) || !URL.canParse(url)) throw new ConfigError('NATS_URL', 'must be nats://[user:password@]host:port or tls://… (percent-encode special characters in the password)')
  const stream = isUnset(env.NATS_STREAM) ? DEFAULT_NATS_STREAM : env.NATS_STREAM.trim()
  if (!STREAM_NAME.test(stream)) throw new ConfigError('NATS_STREAM', `must be 1 to 64 letters, digits, _ or -, got "${stream}"`)
  const subjectPrefix = isUnset(env.NATS_SUBJECT_PREFIX) ? DEFAULT_NATS_SUBJECT_PREFIX : env.NATS_SUBJECT_PREFIX.trim()
  if (!SUBJECT_PREFIX.test(subjectPrefix)) throw new ConfigError('NATS_SUBJECT_PREFIX', `must be dot-separated tokens of letters, digits, _ or - without wildcards, got "${subjectPrefix}"`)
  return Object.freeze({ url, stream, subjectPrefix })
}

function parseAmqp (env: Env): AmqpBusSettings | undefined {
  if (isUnset(env.AMQP_URL)) return undefined
  const url = env.AMQP_URL.trim()
  if (!/^amqps?:\/\//.test(url) || !URL.canParse(url)) throw new ConfigError('AMQP_URL', 'must be amqp://user:password@host:port[/vhost] or amqps://… (percent-encode special characters in the password)')
  const exchange = isUnset(env.AMQP_EXCHANGE) ? DEFAULT_AMQP_EXCHANGE : env.AMQP_EXCHANGE.trim()
  if (!EXCHANGE_NAME.test(exchange) || exchange.startsWith('amq.')) throw new ConfigError('AMQP_EXCHANGE', `must be 1 to 127 letters, digits, _ . : or -, not starting with amq., got "${exchange}"`)
  return Object.freeze({ url, exchange })
}
