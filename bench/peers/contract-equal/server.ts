/**
 * The benchmark's contract-equal peer: plain Fastify, better-sqlite3 (or pg) and the usual libraries (Ajv, pino,
 * prom-client), doing per request what the contract promises for `listPets`, `createPet`, `getPet` and
 * `getInventory` (and `/healthz`), written from the documents, without the service's code or its levers (no page
 * cache, no group commit, no tallies, no hand-made access line): what a skilled engineer writes in an afternoon.
 * `test/tools/contract-equal-peer.test.ts` sends the same requests to it and to the service and finds every
 * answer, log line, event row and counter equal, so it cannot drift from what the service does.
 *
 * Per request: the five security headers and `X-Request-Id`; the `Host` check (RFC 9112 §3.2); load shedding (503
 * `overloaded` while the event loop stays behind); under `/v1` the bearer key (SHA-256, the environment's keys, then
 * `api_keys`, whose `last_used_at` it keeps to the minute), the failed-authentication and per-key windows and their
 * `RateLimit` fields, the read role refused on writes, Ajv validation with the API's messages, exact int64 values,
 * the signed cursor and `Link`, `getPet`'s `Deprecation`/`Sunset`/`Link`, per-key deprecated-call counter, strong
 * ETag and 304, the create and its `pet.created` event in one transaction; one pino access line per answer, and
 * prom-client's counters and histograms (served on `METRICS_PORT`).
 *
 * The service's variables: `PORT`, `HOST`, `DATABASE_URL` (`sqlite:<path>` or `postgres://…`, migrated by the
 * service), `PETSTORE_API_KEYS`, `PETSTORE_READ_API_KEYS`, `PUBLIC_BASE_URL`, `STAGING_BASE_URL`, `RATE_LIMIT_MAX`,
 * `RATE_LIMIT_WINDOW`, `AUTH_FAILURE_LIMIT`, `LOG_LEVEL`, `METRICS_PORT`, `OVERLOAD_SHEDDING`,
 * `OVERLOAD_MAX_EVENT_LOOP_DELAY_MS`. Not done: idempotency keys, CORS, the drain, tracing, the other operations.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import pino from 'pino'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { ApiError, bearerToken, Cursors, ifNoneMatch, keyHash, petJson, redactUrl, SCHEMAS, strongEtag, type PetStatus } from './contract.js'
import { fixedWindow, methodNotAllowed, noRoute, notFound, readJsonBody, roundedIntegerProblem, toApiError, validatorCompiler } from './http.js'
import { isUnavailable, postgresRows, sqliteRows } from './rows.js'

const env = process.env
const number = (name: string, fallback: number): number => env[name] === undefined || env[name] === '' ? fallback : Number(env[name])
const list = (name: string): string[] => (env[name] ?? '').split(',').map((key) => key.trim()).filter((key) => key !== '')
const port = number('PORT', 8080)
const host = env.HOST ?? '127.0.0.1'
const publicBaseUrl = env.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`
const stagingBaseUrl = env.STAGING_BASE_URL?.replace(/\/$/, '')
const JSON_TYPE = 'application/json; charset=utf-8'
const CHALLENGE = 'Bearer realm="petstore"'
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY'
}
const SUNSET = new Date('2030-12-05T00:00:00Z')
const DEPRECATION = { deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`, sunset: SUNSET.toUTCString() }

const databaseUrl = env.DATABASE_URL ?? ''
const rows = databaseUrl.startsWith('sqlite:') ? sqliteRows(databaseUrl.slice('sqlite:'.length)) : await postgresRows(databaseUrl)
const cursors = new Cursors(await rows.cursorSecret(randomBytes(32).toString('base64url')))

interface Key { name: string, role: string, scope: string }
const environmentKeys = [...list('PETSTORE_READ_API_KEYS').map((key) => [key, 'read'] as const), ...list('PETSTORE_API_KEYS').map((key) => [key, 'write'] as const)]
  .map(([key, role]) => ({ digest: Buffer.from(keyHash(key), 'hex'), key: { name: 'environment', role, scope: `env:${keyHash(key).slice(0, 16)}` } }))
const touched = new Map<number, number>()

const registry = new Registry()
const counter = <L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> => new Counter({ name, help, labelNames, registers: [registry] })
const requests = counter('petstore_http_requests_total', 'HTTP answers by operation, method and status.', ['operation', 'method', 'status'])
const duration = new Histogram({
  name: 'petstore_http_request_duration_seconds',
  help: 'Time to answer, by operation and status.',
  labelNames: ['operation', 'status'],
  registers: [registry],
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
})
const deprecatedCalls = counter('petstore_deprecated_operation_calls_total', 'Authenticated calls of deprecated operations.', ['operation', 'api_key', 'role'])
const rejections = counter('petstore_rate_limit_rejections_total', 'Requests answered 429, by policy.', ['policy'])
const insufficientScope = counter('petstore_insufficient_scope_total', 'Requests answered 403 insufficient_scope.', ['operation', 'api_key', 'role'])
const shed = counter('petstore_overload_shed_total', 'Requests answered 503 overloaded.')

const perKeyQuota = number('RATE_LIMIT_MAX', 6000)
const perKey = perKeyQuota === 0
  ? undefined
  : fixedWindow('per-key', perKeyQuota, 1000 * number('RATE_LIMIT_WINDOW', 60), 'Too many requests for this API key', () => { rejections.inc({ policy: 'per-key' }) })
const failedAuth = fixedWindow('failed-auth', number('AUTH_FAILURE_LIMIT', 20), 60_000, 'Too many failed authentications from this address', () => { rejections.inc({ policy: 'failed-auth' }) })
// the unit the failed-authentication limit counts: an IPv4 address, or an IPv6 /64
const addressBucket = (ip: string): string => ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip.includes(':') ? `${ip.split(':').slice(0, 4).join(':')}::/64` : ip

const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 })
setInterval(() => { destination.flush() }, 250).unref()
// typed as Fastify's logger: the routes' types then need no pino generics
const logger: FastifyBaseLogger = pino({ level: env.LOG_LEVEL ?? 'info' }, destination)
const app = Fastify({
  loggerInstance: logger,
  // one access line per answer, written by the onResponse hook below
  logController: new LogController({ disableRequestLogging: true }),
  genReqId: (request) => {
    const incoming = request.headers['x-request-id']
    return typeof incoming === 'string' && /^[A-Za-z0-9._:@/+=-]{1,128}$/.test(incoming) ? incoming : randomUUID()
  },
  requestIdHeader: false,
  bodyLimit: 16 * 1024,
  // a request without Host gets the API's Error body, not Node's bare 400
  http: { requireHostHeader: false },
  routerOptions: { maxParamLength: 1000 }
})

interface RouteConfig { operation?: string, methodNotAllowed?: boolean, shed?: boolean }
const configOf = (request: FastifyRequest): RouteConfig => request.routeOptions.config
// the key a request was authenticated with
const keys = new WeakMap<FastifyRequest, Key>()

// every answer, even one refused at once, carries the security headers and its request id; then Host (RFC 9112 §3.2)
app.addHook('onRequest', (request, reply, done) => {
  reply.headers(SECURITY_HEADERS).header('x-request-id', request.id)
  let hosts = 0
  for (let i = 0; i < request.raw.rawHeaders.length; i += 2) if (request.raw.rawHeaders[i]?.toLowerCase() === 'host') hosts++
  if (hosts > 1) done(new ApiError('invalid_request', 'header "Host" must be sent once (RFC 9112 §3.2)'))
  else if (hosts === 0 && request.raw.httpVersion === '1.1') done(new ApiError('invalid_request', 'header "Host" is required in an HTTP/1.1 request (RFC 9112 §3.2)'))
  else done()
})

// load shedding: two samples of 500 ms in a row with the loop's mean delay past the bound, and requests waiting
if (env.OVERLOAD_SHEDDING !== 'false') {
  const bound = number('OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', 100)
  const delays = monitorEventLoopDelay({ resolution: 10 })
  let late = 0
  let arrivals = 0
  let waiting = false
  delays.enable()
  setInterval(() => {
    late = delays.count > 0 && delays.mean / 1e6 - 10 > bound ? late + 1 : 0
    waiting = arrivals > 1
    arrivals = 0
    delays.reset()
  }, 500).unref()
  app.addHook('onRequest', (request, reply, done) => {
    if (configOf(request).shed === false) return done()
    arrivals++
    if (late < 2 || !(waiting || arrivals > 1)) return done()
    shed.inc()
    reply.header('connection', 'close')
    done(new ApiError('overloaded'))
  })
}

app.addHook('onResponse', (request, reply, done) => {
  const operation = request.is404 ? 'unmatched' : configOf(request).operation ?? request.routeOptions.url ?? 'unmatched'
  const status = String(reply.statusCode)
  requests.inc({ operation, method: request.method, status })
  duration.observe({ operation, status }, reply.elapsedTime / 1000)
  const key = keys.get(request)
  request.log.info({
    method: request.method,
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    statusCode: reply.statusCode,
    responseTime: reply.elapsedTime,
    ...(key === undefined ? {} : { keyName: key.name, keyRole: key.role })
  }, 'request completed')
  done()
})

app.setErrorHandler((error, request, reply) => {
  const answer = toApiError(error)
  if (isUnavailable(error)) request.log.warn({ err: error }, 'request failed: the store is unavailable')
  else if (answer.code === 'internal_error') request.log.error({ err: error }, 'request failed')
  else if (answer.code === 'service_unavailable') request.log.warn({ code: answer.code, reason: answer.message }, 'request refused: unavailable')
  else request.log.info({ code: answer.code, reason: answer.message }, 'request rejected')
  return reply.code(answer.status).header('x-request-id', request.id).headers(answer.headers).type(JSON_TYPE).send(answer.body)
})

app.setNotFoundHandler(notFound)
app.setValidatorCompiler(validatorCompiler())
app.removeAllContentTypeParsers()
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
  try {
    done(null, readJsonBody(request.headers['content-type'], body as Buffer))
  } catch (error) {
    done(error as Error, undefined)
  }
})

/** The base address of the deployment a request came through: staging when its Host is the staging host. */
function baseUrlOf (request: FastifyRequest): string {
  if (stagingBaseUrl === undefined) return publicBaseUrl
  const staging = new URL(stagingBaseUrl)
  try {
    return new URL(`${staging.protocol}//${request.host}`).host === staging.host ? stagingBaseUrl : publicBaseUrl
  } catch {
    return publicBaseUrl
  }
}

app.get('/healthz', { config: { operation: 'getHealth', shed: false } }, async () => ({ status: 'ok' }))
app.route(methodNotAllowed(app.supportedMethods, '/healthz', ['GET']))

await app.register(async (v1) => {
  v1.setNotFoundHandler(notFound)

  const refuse = async (request: FastifyRequest, reply: FastifyReply, error: ApiError): Promise<never> => {
    // a request without any key guesses nothing: neither counted nor refused
    if (request.headers.authorization !== undefined) throw failedAuth(addressBucket(request.ip), reply) ?? error
    throw error
  }
  v1.addHook('onRequest', async (request, reply) => {
    const bearer = bearerToken(request.headers.authorization)
    if (bearer === 'missing') return refuse(request, reply, new ApiError('unauthorized', 'Missing API key: send "Authorization: Bearer <API key>".', { 'www-authenticate': CHALLENGE }))
    if (bearer === 'malformed') {
      return refuse(request, reply, new ApiError('unauthorized', 'Malformed Authorization header: expected "Bearer <API key>".', { 'www-authenticate': `${CHALLENGE}, error="invalid_request"` }))
    }
    const hash = keyHash(bearer.token)
    const digest = Buffer.from(hash, 'hex')
    let key: Key | undefined
    // every environment key compared: the time does not tell which one matched
    for (const entry of environmentKeys) if (timingSafeEqual(entry.digest, digest)) key = entry.key
    if (key === undefined) {
      const stored = await rows.findKey(hash)
      if (stored === undefined) return refuse(request, reply, new ApiError('unauthorized', 'Unknown or revoked API key.', { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` }))
      const now = Date.now()
      if (now - (touched.get(stored.id) ?? 0) >= 60_000) {
        touched.set(stored.id, now)
        setImmediate(() => { rows.touchKey(stored.id, new Date(now)).catch((error: unknown) => { request.log.warn({ err: error }, 'could not record API key use') }) })
      }
      key = { name: stored.name, role: stored.role, scope: `key:${stored.id}` }
    }
    keys.set(request, key)
  })
  v1.addHook('onRequest', (request, reply, done) => {
    done(perKey?.(keys.get(request)?.scope ?? 'none', reply))
  })
  v1.addHook('onRequest', (request, _reply, done) => {
    const key = keys.get(request)
    const config = configOf(request)
    if (key === undefined || key.role !== 'read' || request.method === 'GET' || request.method === 'HEAD' || request.routeOptions.url === undefined || config.methodNotAllowed === true) return done()
    const operation = config.operation ?? `${request.method} ${request.routeOptions.url}`
    insufficientScope.inc({ operation, api_key: key.name, role: key.role })
    done(new ApiError('insufficient_scope', `This API key has the read role, which may only call operations that read; ${operation} needs a key with the write role.`,
      { 'www-authenticate': `${CHALLENGE}, error="insufficient_scope"` }))
  })

  v1.get('/pets', { schema: { querystring: SCHEMAS.listQuery }, config: { operation: 'listPets' } }, async (request, reply) => {
    const { limit, status, cursor } = request.query as { limit: number, status?: PetStatus, cursor?: string }
    let afterId = 0
    if (cursor !== undefined) {
      const position = cursors.decode(cursor)
      if (position === undefined) throw new ApiError('invalid_cursor', 'query parameter "cursor" is not a cursor this service issued')
      if (position.status !== status) throw new ApiError('invalid_cursor', 'query parameter "cursor" belongs to a list with another status filter; keep "status" as in the link that carried it')
      afterId = position.afterId
    }
    const pets = await rows.listPets(status, afterId, limit + 1)
    const page = pets.slice(0, limit)
    const last = page.at(-1)
    if (pets.length > limit && last !== undefined) {
      const next = new URLSearchParams({ limit: String(limit) })
      if (status !== undefined) next.set('status', status)
      next.set('cursor', cursors.encode({ afterId: last.id, status }))
      reply.header('link', `<${baseUrlOf(request)}/pets?${next.toString()}>; rel="next"`)
    }
    return reply.type(JSON_TYPE).send(`[${page.map(petJson).join(',')}]`)
  })

  v1.post('/pets', {
    schema: { body: SCHEMAS.newPet, querystring: SCHEMAS.noQuery },
    config: { operation: 'createPet' },
    // a compressed body is refused before it is read (RFC 7694)
    preParsing: (request, _reply, payload, done) => {
      const encoding = request.headers['content-encoding']
      const hasBody = request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0'
      if (encoding === undefined || encoding.trim().toLowerCase() === 'identity' || !hasBody) return done(null, payload)
      done(new ApiError('unsupported_media_type', `The request body has Content-Encoding "${encoding}"; send it uncompressed (Accept-Encoding: identity).`, { 'accept-encoding': 'identity' }))
    },
    // after validation: an integer field whose literal had a fraction that parsing rounded away
    preHandler: (request, _reply, done) => { done(roundedIntegerProblem(request.body)) }
  }, async (request, reply) => {
    const { name, categoryId, status = 'available' } = request.body as { name: string, categoryId: number | bigint, status?: PetStatus }
    const pet = await rows.createPet({ name, categoryId, status })
    return reply.code(201).header('location', `/v1/pets/${pet.id}`).type(JSON_TYPE).send(petJson(pet))
  })

  v1.get('/pets/:petId', {
    schema: { params: SCHEMAS.petIdParams, querystring: SCHEMAS.noQuery, headers: SCHEMAS.getPetHeaders },
    config: { operation: 'getPet' },
    preValidation: (_request, _reply, done) => {
      done(Date.now() >= SUNSET.getTime() ? new ApiError('gone', `GET /v1/pets/{petId} was removed on ${SUNSET.toUTCString()}; use GET /v1/pets with the status filter`) : undefined)
    },
    // every answer, refusals included, is marked deprecated; a 200 gets its ETag, and a matching If-None-Match makes it a 304
    onSend: (request, reply, payload, done) => {
      reply.headers({ ...DEPRECATION, link: `<${baseUrlOf(request)}/pets>; rel="successor-version"` })
      const key = keys.get(request)
      if (key !== undefined) deprecatedCalls.inc({ operation: 'getPet', api_key: key.name, role: key.role })
      if (reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload)
      const etag = strongEtag(payload)
      reply.header('etag', etag).header('cache-control', 'private, no-cache')
      const header = request.headers['if-none-match']
      if (!ifNoneMatch(typeof header === 'string' ? header : undefined, etag)) return done(null, payload)
      reply.code(304).removeHeader('content-type')
      done(null, request.method === 'HEAD' ? payload : null)
    }
  }, async (request, reply) => {
    const { petId } = request.params as { petId: number | bigint }
    const pet = await rows.getPet(petId)
    if (pet === undefined) throw new ApiError('pet_not_found', `No pet has id ${petId}.`)
    return reply.type(JSON_TYPE).send(petJson(pet))
  })

  v1.get('/store/inventory', { schema: { querystring: SCHEMAS.noQuery }, config: { operation: 'getInventory' } }, async (_request, reply) => {
    const { available, pending, sold } = await rows.inventory()
    return reply.type(JSON_TYPE).send(`{"available":${available},"pending":${pending},"sold":${sold}}`)
  })

  // no path ends in "/": `/pets/` is not getPet with an empty id
  v1.route({ method: v1.supportedMethods, url: '/pets/', onRequest: async (request) => { throw noRoute(request) }, handler: async () => {} })
  v1.route(methodNotAllowed(v1.supportedMethods, '/pets', ['GET', 'POST']))
  v1.route(methodNotAllowed(v1.supportedMethods, '/pets/:petId', ['GET', 'PATCH']))
  v1.route(methodNotAllowed(v1.supportedMethods, '/store/inventory', ['GET']))
}, { prefix: '/v1' })

const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : Number(env.METRICS_PORT)
const metricsServer = metricsPort === undefined
  ? undefined
  : createServer((_request, response) => {
    registry.metrics().then((text) => { response.writeHead(200, { 'content-type': registry.contentType }).end(text) }, () => { response.writeHead(500).end() })
  })
if (metricsServer !== undefined) {
  collectDefaultMetrics({ register: registry, prefix: 'petstore_' })
  metricsServer.listen(metricsPort, host)
}

await app.listen({ port, host })

const stop = (): void => {
  metricsServer?.close()
  app.close().then(async () => { await rows.close() }).finally(() => { destination.flush(() => { process.exit(0) }) }).catch(() => { process.exit(1) })
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
