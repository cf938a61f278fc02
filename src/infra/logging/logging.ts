import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import pino from 'pino'
import { API_KEY_PREFIX, ISSUED_API_KEY } from '../credentials/credentials.js'
import type { LogLevel } from '../config/config.js'
import { batchedStdout } from './log-destination.js'

/** Where log lines go when not stdout (tests read them back). */
export interface LogStream {
  write (line: string): void
}

const REDACTED = '[redacted]'

// headers that carry credentials, wherever a log line includes headers
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers["x-api-key"]'
]

// query parameters a client might (wrongly) put a key in; RFC 6750 names access_token
const SECRET_QUERY_PARAMETER = /^(x[-_]?)?(access[-_]?token|api[-_]?key|key|token|auth|authorization|bearer)$/i

// URLs seen to hold nothing to redact (so no secret is kept here), to skip the work on hot URLs
const CLEAN_URLS = new Set<string>()
const MAX_CLEAN_URLS = 1000

/** The URL as logged: the values of parameters that may hold a key are replaced. */
export function redactUrl (rawUrl: string): string {
  // nothing to look at: no query, and no key of ours in the path (most URLs, /v1/pets/{id} among them)
  if (!rawUrl.includes('?') && !rawUrl.includes(API_KEY_PREFIX)) return rawUrl
  if (CLEAN_URLS.has(rawUrl)) return rawUrl
  const redacted = redactUrlNow(rawUrl)
  if (redacted === rawUrl && CLEAN_URLS.size < MAX_CLEAN_URLS) CLEAN_URLS.add(rawUrl)
  return redacted
}

function redactUrlNow (rawUrl: string): string {
  const url = rawUrl.replace(ISSUED_API_KEY, REDACTED)
  const question = url.indexOf('?')
  if (question === -1) return url
  const query = url.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    let decoded = name
    try { decoded = decodeURIComponent(name) } catch {}
    return equals !== -1 && SECRET_QUERY_PARAMETER.test(decoded) ? `${name}=${REDACTED}` : pair
  })
  return `${url.slice(0, question)}?${query.join('&')}`
}

interface LoggedRequest {
  method: string
  url: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

/**
 * pino options for the service: JSON lines, the request id on every line about a request
 * (Fastify adds it), and no key material: credentials in headers and URLs are redacted. Lines go to
 * `stream`, else to standard output in batches ({@link batchedStdout}).
 */
export function loggerOptions (level: LogLevel, stream?: LogStream): FastifyServerOptions['logger'] & object {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: {
      req: (request: LoggedRequest) => ({
        method: request.method,
        url: redactUrl(request.url),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort
      })
    },
    stream: stream ?? batchedStdout()
  }
}

/**
 * One access-log line per request, at `info`, when the answer has gone out: method, URL (redacted),
 * client address, status and time, the name and role of the key that authenticated it, and (with
 * tracing on) the trace id. Fastify's default writes two lines per request through the
 * `req`/`res` serializers, which read getters on every request; that halved the throughput of a
 * bare route in the benchmark (docs/performance.md). The line on arrival is kept at `debug`.
 */
export class RequestLogController extends LogController {
  /** With tracing on, reads a request's trace id for its line. */
  readonly #traceIdOf: ((request: FastifyRequest) => string | undefined) | undefined

  constructor (traceIdOf?: (request: FastifyRequest) => string | undefined) {
    super()
    this.#traceIdOf = traceIdOf
  }

  override incomingRequest (request: FastifyRequest): void {
    // a no-op at info: pino only serializes what it writes
    request.log.debug({ req: request }, 'incoming request')
  }

  /**
   * A consumer hanging up is how a stream of events (`text/event-stream`) ends, so that premature close is
   * logged at `debug`, not Fastify's `info`; any other failure of a stream is Fastify's `warn`, as before.
   */
  override streamError (error: Error & { code?: unknown }, request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' && String(reply.getHeader('content-type')).startsWith('text/event-stream')) {
      reply.log.debug({ res: reply }, 'stream closed prematurely')
      return
    }
    super.streamError(error, request, reply)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // the key's name and role, never the key; undefined outside /v1, where no key is decorated
    const key = request.apiKey ?? null
    const traceId = this.#traceIdOf?.(request)
    if (!error) {
      writeAccessLine(reply.log, request, reply, key, traceId)
      return
    }
    reply.log.error({ ...accessFields(request, reply, key, traceId), err: error }, 'request errored')
  }
}

/** The fields of a request's access line, in the order they are written (the template below writes the same). */
function accessFields (request: FastifyRequest, reply: FastifyReply, key: { name: string, role: string } | null, traceId: string | undefined): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    statusCode: reply.statusCode,
    responseTime: reply.elapsedTime,
    ...(key === null ? {} : { keyName: key.name, keyRole: key.role }),
    ...(traceId === undefined ? {} : { traceId })
  }
}

/** What a pino logger writes to and the JSON of its bindings (`,"pid":…,"hostname":…,"reqId":…`), through pino's public symbols. */
interface PinoInternals {
  [pino.symbols.streamSym]?: { write (line: string): unknown }
  [pino.symbols.chindingsSym]?: string
}

const INFO = pino.levels.values.info ?? 30

/**
 * The access line, as pino would write `log.info(line, 'request completed')`: the same fields in the
 * same order after the level, time and bindings, formatted here in one template instead of by pino's
 * generic serializer, which walked the object and escaped every value on each request
 * (docs/performance.md). Strings a client or an operator chose (URL, address: a forwarded one comes
 * from a header, key name) are escaped by JSON.stringify; the others cannot hold a character that
 * needs it (an HTTP method is a token Node's parser checked, a number, a role, a trace id in hex).
 */
function writeAccessLine (log: FastifyBaseLogger, request: FastifyRequest, reply: FastifyReply, key: { name: string, role: string } | null, traceId: string | undefined): void {
  if ((pino.levels.values[log.level] ?? Infinity) > INFO) return
  const { [pino.symbols.streamSym]: stream, [pino.symbols.chindingsSym]: bindings } = log as unknown as PinoInternals
  if (stream === undefined || bindings === undefined) {
    // not a pino logger (never the case here): the generic way
    log.info(accessFields(request, reply, key, traceId), 'request completed')
    return
  }
  const address = request.ip
  stream.write(`{"level":${INFO},"time":${Date.now()}${bindings},"method":"${request.method}","url":${JSON.stringify(redactUrl(request.url))}` +
    `${address === undefined ? '' : `,"remoteAddress":${JSON.stringify(address)}`},"statusCode":${reply.statusCode},"responseTime":${reply.elapsedTime}` +
    `${key === null ? '' : `,"keyName":${JSON.stringify(key.name)},"keyRole":"${key.role}"`}${traceId === undefined ? '' : `,"traceId":"${traceId}"`}` +
    ',"msg":"request completed"}\n')
}
