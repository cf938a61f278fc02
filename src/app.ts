import { randomBytes, randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { addBearerAuth } from './auth/bearer-auth.js'
import type { Config } from './config.js'
import { acceptJsonBodiesOnly } from './content-types.js'
import apiReference from './docs/api-reference.js'
import { ApiError, BODY_LIMIT_BYTES, handleClientError, handleError, sendError } from './errors.js'
import { loggerOptions, RequestLogController, type LogStream } from './http/logging.js'
import { REQUEST_ID_HEADER, requestIdFor } from './http/request-id.js'
import { addSecurityHeaders } from './http/security.js'
import { IdempotentCreates } from './idempotency.js'
import { instrumentStore } from './metrics/instrument-store.js'
import { Metrics } from './metrics/metrics.js'
import { registerOpenApi } from './openapi.js'
import { RateLimits } from './rate-limit/rate-limits.js'
import { CursorCodec } from './pagination/cursor.js'
import health from './routes/health.js'
import openApiDocument from './routes/openapi-document.js'
import orders from './routes/orders.js'
import pets from './routes/pets.js'
import { SHARED_SCHEMAS } from './schemas/index.js'
import { openStore } from './store/open-store.js'
import type { PetStore } from './store/pet-store.js'
import { buildValidator } from './validation.js'

/** The time source; tests inject one to move past dates such as a sunset. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now (): number
}

/** A route as registered: what route listings (tests, audits) walk. */
export interface RegisteredRoute {
  method: string
  url: string
  /** True for the stand-ins that only answer 405. */
  methodNotAllowed: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    clock: Clock
    store: PetStore
    cursors: CursorCodec
    /** Every route registered, in order (HEAD routes Fastify adds included). */
    registeredRoutes: readonly RegisteredRoute[]
    metrics: Metrics
    rateLimits: RateLimits
    idempotentCreates: IdempotentCreates
  }
}

export interface AppOptions {
  config: Config
  clock?: Clock
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: LogStream
}

const systemClock: Clock = { now: () => Date.now() }

/** How long a client may take to send a whole request; shorter than the drain on SIGTERM. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * Builds the whole service from its configuration: opens (and migrates) the store,
 * registers every route. It never listens; `server.ts` does. Closing the app closes the store.
 */
export async function buildApp ({ config, clock = systemClock, logStream }: AppOptions): Promise<FastifyInstance> {
  const app = createFastify(config, logStream)
  try {
    await assemble(app, config, clock)
  } catch (error) {
    // whatever was opened so far (store, Redis) is closed by its onClose hook
    await app.close().catch(() => {})
    throw error
  }
  return app
}

function createFastify (config: Config, logStream: LogStream | undefined) {
  return Fastify({
    logger: loggerOptions(config.logLevel, logStream),
    logController: new RequestLogController(),
    // a valid incoming X-Request-Id is kept (a proxy's or a client's), else one is generated
    genReqId: requestIdFor,
    requestIdHeader: false,
    // a number of hops is passed as the equivalent function: Fastify's types take no number
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // a whole request must arrive within this; a stalled upload cannot hold a connection (or a drain) open.
    // Node only enforces it when the server is created with it, hence the http options as well
    requestTimeout: REQUEST_TIMEOUT_MS,
    http: { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    // long enough that an over-long id reaches auth and validation instead of failing in the router
    routerOptions: { maxParamLength: 1000 },
    clientErrorHandler: handleClientError,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    schemaController: { compilersFactory: { buildValidator } },
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
    // replaced by the onRequest hook below, which answers in the Error shape
    return503OnClosing: false
  }).withTypeProvider<TypeBoxTypeProvider>()
}

/** Registers everything on the app: hooks, store, limits, routes. */
async function assemble (app: ReturnType<typeof createFastify>, config: Config, clock: Clock): Promise<void> {
  const registeredRoutes: RegisteredRoute[] = []
  app.decorate('registeredRoutes', registeredRoutes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      registeredRoutes.push({ method, url: route.url, methodNotAllowed: route.config?.methodNotAllowed === true })
    }
  })

  // first of all hooks: every answer, even one refused early, names its request
  app.addHook('onRequest', async (request, reply) => { reply.header(REQUEST_ID_HEADER, request.id) })

  const metrics = new Metrics()
  app.decorate('metrics', metrics)
  app.addHook('onResponse', async (request, reply) => {
    const operation = request.routeOptions.schema?.operationId ?? request.routeOptions.url ?? 'unmatched'
    const status = String(reply.statusCode)
    metrics.requests.inc({ operation, method: request.method, status })
    metrics.requestDuration.observe({ operation, status }, reply.elapsedTime / 1000)
  })

  const { store: rawStore } = await openStore(config.database, {
    onBackgroundError: (error) => { app.log.warn({ err: error }, 'store connection failed while idle') }
  })
  const store = instrumentStore(rawStore, metrics.storeDuration)
  app.addHook('onClose', async () => { await store.close() })
  app.decorate('config', config)
  app.decorate('clock', clock)
  app.decorate('store', store)
  const cursorSecret = await store.ensureSetting('cursor_secret', randomBytes(32).toString('base64url'))
  app.decorate('cursors', new CursorCodec(cursorSecret))

  const idempotentCreates = new IdempotentCreates(store, clock, app.log)
  app.decorate('idempotentCreates', idempotentCreates)
  idempotentCreates.start()
  app.addHook('onClose', async () => { idempotentCreates.stop() })

  await addSecurityHeaders(app, config.corsOrigins)
  app.decorate('rateLimits', await registerRateLimits(app, config, metrics))

  // while draining after SIGTERM, new requests on kept-alive connections are turned away
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
    // Node stops enforcing requestTimeout once the server closes: a stalled upload would hold the drain forever
    setTimeout(() => { app.server.closeAllConnections() }, REQUEST_TIMEOUT_MS).unref()
  })
  // a kept-alive connection would otherwise hold the drain open until the client hangs up
  app.addHook('onSend', async (_request, reply) => { if (closing) reply.header('connection', 'close') })
  app.addHook('onRequest', async () => {
    if (closing) {
      throw new ApiError('service_unavailable', 'The service is shutting down; retry on another instance.')
    }
  })

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  acceptJsonBodiesOnly(app)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFound)
  await registerOpenApi(app, config)

  await app.register(health)
  await app.register(openApiDocument, { prefix: '/v1' })
  await app.register(apiReference)
  await app.register(async (v1) => {
    addBearerAuth(v1, { environmentKeys: config.apiKeys, cacheMs: config.apiKeyCacheMs, guard: app.rateLimits })
    // after authentication: the limit is per key
    v1.addHook('onRequest', async (request, reply) => { await app.rateLimits.consumeForKey(request, reply) })
    v1.setNotFoundHandler(notFound)
    await v1.register(pets)
    await v1.register(orders)
  }, { prefix: '/v1' })
}

/** Rate limits with counters in Redis when `REDIS_URL` is set (shared by all instances), else in memory. */
async function registerRateLimits (app: FastifyInstance, config: Config, metrics: Metrics): Promise<RateLimits> {
  // loaded only when used: ioredis alone adds about 20 MB to the process
  const redis = config.redisUrl === undefined ? undefined : await (await import('./rate-limit/redis.js')).connectRedis(config.redisUrl, app.log)
  if (redis !== undefined) app.addHook('onClose', async () => { redis.disconnect() })
  // one id per database: instances of one deployment share counters, staging and production never do
  const deploymentId = await app.store.ensureSetting('deployment_id', randomUUID())
  let lastErrorLoggedAt = 0
  return await RateLimits.register(app, {
    perKey: config.rateLimitMax === 0 ? undefined : { name: 'per-key', quota: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
    failedAuth: { name: 'failed-auth', quota: config.authFailureLimit, windowMs: 60_000 },
    redis,
    namespace: `petstore:${deploymentId}:rate-limit:`,
    onRejected: (policy) => { metrics.rateLimitRejections.inc({ policy: policy.name }) },
    onStoreError: (error) => {
      metrics.rateLimitStoreErrors.inc()
      // at most one line per 10 s: an outage must not flood the log
      if (error === undefined || Date.now() - lastErrorLoggedAt < 10_000) return
      lastErrorLoggedAt = Date.now()
      // code and message only: a Redis error carries the failed command, which may hold a password
      const { code, message } = error as { code?: unknown, message?: unknown }
      app.log.warn({ code, reason: message }, 'rate-limit check skipped: the counter store failed (fail open)')
    }
  })
}

function trustHops (hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}

async function notFound (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await sendError(reply, new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}; the API is described at /v1/openapi.json.`))
}
