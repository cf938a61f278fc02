/** The bounds of the streaming change feed (`GET /v1/events` as Server-Sent Events), from the `EVENT_STREAM_*` variables. */
export interface EventStreamSettings {
  /** Most streams one API key may hold open on one instance (`EVENT_STREAM_MAX_PER_KEY`); past it, 429. */
  readonly maxPerKey: number
  /** Most streams one instance holds open (`EVENT_STREAM_MAX_PER_INSTANCE`); past it, 503. */
  readonly maxPerInstance: number
  /** A comment is sent on a stream after this long without a message (`EVENT_STREAM_HEARTBEAT_SECONDS`), in ms. */
  readonly heartbeatMs: number
  /** Unsent bytes a stream may have waiting for a consumer that does not read (`EVENT_STREAM_MAX_BACKLOG_KIB`); past it, the stream is cut. */
  readonly maxBacklogBytes: number
}

/** The variables read here (config.ts lists them among every variable). */
export const EVENT_STREAM_VARIABLES = ['EVENT_STREAM_MAX_PER_KEY', 'EVENT_STREAM_MAX_PER_INSTANCE', 'EVENT_STREAM_HEARTBEAT_SECONDS', 'EVENT_STREAM_MAX_BACKLOG_KIB'] as const

/** `EVENT_STREAM_MAX_PER_KEY`: a consumer needs one or a few; a loop that opens them without closing is stopped here. */
export const DEFAULT_EVENT_STREAM_MAX_PER_KEY = 100
/** `EVENT_STREAM_MAX_PER_INSTANCE`: each open stream holds a socket and up to its backlog in memory. */
export const DEFAULT_EVENT_STREAM_MAX_PER_INSTANCE = 2000
/** `EVENT_STREAM_HEARTBEAT_SECONDS`: below the idle timeouts of common proxies and balancers (60 s and more). */
export const DEFAULT_EVENT_STREAM_HEARTBEAT_SECONDS = 15
/** `EVENT_STREAM_MAX_BACKLOG_KIB`: about a thousand events of a few hundred bytes. */
export const DEFAULT_EVENT_STREAM_MAX_BACKLOG_KIB = 512

type Env = Readonly<Partial<Record<typeof EVENT_STREAM_VARIABLES[number], string | undefined>>>
type ParseInteger = (variable: string, value: string | undefined, min: number, max: number) => number | undefined

/** Reads the `EVENT_STREAM_*` variables with config.ts's integer parser (which throws the ConfigError naming a wrong one). */
export function parseEventStreams (env: Env, parseInteger: ParseInteger): EventStreamSettings {
  const maxPerKey = parseInteger('EVENT_STREAM_MAX_PER_KEY', env.EVENT_STREAM_MAX_PER_KEY, 1, 100_000) ?? DEFAULT_EVENT_STREAM_MAX_PER_KEY
  const maxPerInstance = parseInteger('EVENT_STREAM_MAX_PER_INSTANCE', env.EVENT_STREAM_MAX_PER_INSTANCE, 1, 100_000) ?? DEFAULT_EVENT_STREAM_MAX_PER_INSTANCE
  return Object.freeze({
    maxPerKey,
    maxPerInstance,
    heartbeatMs: 1000 * (parseInteger('EVENT_STREAM_HEARTBEAT_SECONDS', env.EVENT_STREAM_HEARTBEAT_SECONDS, 1, 300) ?? DEFAULT_EVENT_STREAM_HEARTBEAT_SECONDS),
    maxBacklogBytes: 1024 * (parseInteger('EVENT_STREAM_MAX_BACKLOG_KIB', env.EVENT_STREAM_MAX_BACKLOG_KIB, 16, 1_048_576) ?? DEFAULT_EVENT_STREAM_MAX_BACKLOG_KIB)
  })
}
