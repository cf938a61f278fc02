import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifySchema } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { addBearerAuth } from './capabilities/keys/bearer-auth.js'
import { addRoleCheck } from './capabilities/keys/role-check.js'
import { systemClock, type Clock } from './infra/runtime/clock.js'
import type { Config } from './infra/config/config.js'
import apiReference from './capabilities/docs/api-reference.js'
import { registerOpenApi } from './capabilities/docs/openapi.js'
import { EventRetention } from './capabilities/events/event-retention.js'
import { handleClientError } from './infra/http/client-errors.js'
import { acceptJsonBodiesOnly, BODY_LIMIT_BYTES } from './infra/http/content-types.js'
import { drainOnClose, REQUEST_TIMEOUT_MS } from './infra/http/drain.js'
import { handleError, notFound } from './infra/http/error-handler.js'
import { loggerOptions, RequestLogController, type LogStream } from './infra/logging/logging.js'
import { refuseUnknownQueryParameters } from './infra/http/query-parameters.js'
import { answerHeaders } from './infra/http/answer-headers.js'
import { requestIdFor } from './infra/http/request-id.js'
import { buildSerializer } from './infra/http/serialization.js'
import { settleHook } from './infra/http/settle-hook.js'
import { registerCors } from './infra/http/security.js'
import { refuseTrailingSlashes } from './infra/http/trailing-slash.js'
import { buildValidator } from './infra/http/validation.js'
import { IdempotencyExpiry } from './capabilities/idempotency/idempotency-expiry.js'
import { IdempotentCreates } from './capabilities/idempotency/idempotent-creates.js'
import { BackgroundWorkers } from './infra/background/background-work.js'
import { httpMetrics } from './infra/metrics/http-metrics.js'
import { instrumentStore } from './infra/metrics/instrument-store.js'
import { CursorCodec } from './capabilities/pets/cursor.js'
import { registerRateLimits } from './capabilities/rate-limits/register-rate-limits.js'
import events from './capabilities/events/events-routes.js'
import health from './capabilities/health/health-routes.js'
import openApiDocument from './capabilities/docs/openapi-document-routes.js'
import orders from './capabilities/orders/orders-routes.js'
import pets from './capabilities/pets/pets-routes.js'
import { SHARED_SCHEMAS } from './capabilities/shared-schemas.js'
import type { EventStore } from './capabilities/events/store/event-store.js'
import { openStore } from './infra/database/open-database.js'
import type { PetStore } from './capabilities/pets/store/pet-store.js'
import type { Tracing } from './infra/tracing/tracing.js'
import type { WebhookStore } from './capabilities/webhooks/store/webhook-store.js'
import { WebhookDispatcher } from './capabilities/webhooks/webhook-dispatcher.js'
import { WebhookSender } from './capabilities/webhooks/webhook-sender.js'

/** A route as registered: what route listings (tests, audits) walk. */
export interface RegisteredRoute {
  method: string
  url: string
  /** True for the stand-ins that only answer 405. */
  methodNotAllowed: boolean
  /** True for the stand-ins that only answer 404 (paths that end in "/"). */
  notFound: boolean
  /** Its schema as registered: what its validators and serializers are compiled from, on first use (test/http/schemas.test.ts). */
  schema: FastifySchema | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    clock: Clock
    store: PetStore
    cursors: CursorCodec
    /** Every route registered, in order (HEAD routes Fastify adds included). */
    registeredRoutes: readonly RegisteredRoute[]
    idempotentCreates: IdempotentCreates
    idempotencyExpiry: IdempotencyExpiry
    /** The change feed (read side; the store writes events with each change). */
    events: EventStore
    eventRetention: EventRetention
    /** Webhook endpoints and their delivery queue (registered by the CLI; delivered by the dispatcher). */
    webhooks: WebhookStore
  }
}

export interface AppOptions {
  config: Config
  clock?: Clock
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: LogStream
}

/**
 * Builds the whole service from its configuration: opens (and migrates) the store,
 * registers every route. It never listens; `bin/server.ts` does. Closing the app closes the store.
 */
export async function buildApp ({ config, clock = systemClock, logStream }: AppOptions): Promise<FastifyInstance> {
  // only when configured: unset, no OpenTelemetry module is loaded and requests pay nothing for it
  const tracing = config.tracing === undefined ? undefined : (await import('./infra/tracing/tracing.js')).startTracing(config.tracing, config.database)
  const app = createFastify(config, logStream, tracing)
  try {
    await assemble(app, config, clock, tracing)
  } catch (error) {
    // whatever was opened so far (store, Redis) is closed by its onClose hook
    await app.close().catch(() => {})
    throw error
  }
  return app
}

function createFastify (config: Config, logStream: LogStream | undefined, tracing: Tracing | undefined) {
  return Fastify({
    logger: loggerOptions(config.logLevel, logStream),
    logController: new RequestLogController(tracing?.traceIdOf),
    // a valid incoming X-Request-Id is kept (a proxy's or a client's), else one is generated
    genReqId: requestIdFor,
    requestIdHeader: false,
    // a number of hops is passed as the equivalent function: Fastify's types take no number
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // a whole request must arrive within this; a stalled upload cannot hold a connection (or a drain) open.
    // Node only enforces it when the server is created with it, hence the http options as well
    requestTimeout: REQUEST_TIMEOUT_MS,
    // a request without Host gets an Error body (http/host-header.ts) instead of Node's bare 400
    http: { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000, requireHostHeader: false },
    // long enough that an over-long id reaches auth and validation instead of failing in the router
    routerOptions: { maxParamLength: 1000 },
    clientErrorHandler: handleClientError,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
    frameworkErrors: (error, request, reply) => { handleError(error, request, reply) },
    // replaced by drainOnClose, which answers in the Error shape
    return503OnClosing: false
  }).withTypeProvider<TypeBoxTypeProvider>()
}

/** Registers everything on the app: hooks, store, limits, routes. */
async function assemble (app: ReturnType<typeof createFastify>, config: Config, clock: Clock, tracing: Tracing | undefined): Promise<void> {
  if (tracing !== undefined) {
    // first: the request span must enclose every hook, the key look-up included
    await app.register(tracing.plugin)
    app.addHook('onClose', tracing.shutdown)
  }
  const registeredRoutes: RegisteredRoute[] = []
  app.decorate('registeredRoutes', registeredRoutes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      registeredRoutes.push({ method, url: route.url, methodNotAllowed: route.config?.methodNotAllowed === true, notFound: route.config?.notFound === true, schema: route.schema })
    }
  })

  // first of all hooks: every answer, even one refused early, names its request; then the Host check
  await app.register(answerHeaders)
  await app.register(httpMetrics)

  const opened = await openStore(config.database, {
    onBackgroundError: (error) => { app.log.warn({ err: error }, 'store connection failed while idle') }
  })
  const store = instrumentStore(tracing === undefined ? opened.store : tracing.traceStore(opened.store), app.metrics.storeDuration)
  const eventStore = instrumentStore(tracing === undefined ? opened.events : tracing.traceStore(opened.events), app.metrics.storeDuration)
  const webhookStore = instrumentStore(opened.webhooks, app.metrics.storeDuration)
  app.addHook('onClose', async () => { await store.close() })
  // onClose hooks run last registered first, after the HTTP server has closed: the background work stops
  // (its work in flight awaited) after HTTP has drained and before the store closes
  const background = new BackgroundWorkers()
  app.addHook('onClose', async () => { await background.stopAll() })
  // the raw store: a scrape's check is not a request's store call
  app.metrics.watchReadiness(async () => { await opened.store.ping() })
  app.decorate('config', config)
  app.decorate('clock', clock)
  app.decorate('store', store)
  const cursorSecret = await store.ensureSetting('cursor_secret', randomBytes(32).toString('base64url'))
  app.decorate('cursors', new CursorCodec(cursorSecret))

  app.decorate('idempotentCreates', new IdempotentCreates(store, clock, app.log))
  app.decorate('idempotencyExpiry', background.start(new IdempotencyExpiry(store, clock, app.log, app.metrics)))

  app.decorate('events', eventStore)
  app.decorate('eventRetention', background.start(new EventRetention(eventStore, clock, app.log, config.eventRetentionDays, app.metrics)))

  // every instance delivers; the queue and the leases live in the store
  app.decorate('webhooks', webhookStore)
  background.start(new WebhookDispatcher({ store: webhookStore, sender: new WebhookSender(config.webhooks), settings: config.webhooks, clock, log: app.log, metrics: app.metrics }))
  app.metrics.measureOldestUndelivered(async () => await webhookStore.oldestUndeliveredEventAt(), () => clock.now())

  await registerCors(app, config.corsOrigins)
  await registerRateLimits(app, config)
  await app.register(drainOnClose)

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  acceptJsonBodiesOnly(app)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFound)
  await registerOpenApi(app, config)

  await app.register(health)
  await app.register(openApiDocument, { prefix: '/v1' })
  await app.register(apiReference)
  await app.register(async (v1) => {
    addBearerAuth(v1, { environmentKeys: config.apiKeys, readEnvironmentKeys: config.readApiKeys, cacheMs: config.apiKeyCacheMs, guard: app.rateLimits })
    // after authentication: the limit is per key
    v1.addHook('onRequest', (request, reply, done) => { settleHook(() => app.rateLimits.consumeForKey(request, reply), done) })
    // after the limit, so a 403 carries the key's RateLimit fields like every answer to a valid key
    addRoleCheck(v1, { onRefused: (key, operation) => { app.metrics.insufficientScope.inc({ operation, api_key: key.name, role: key.role }) } })
    v1.setNotFoundHandler(notFound)
    refuseTrailingSlashes(v1)
    refuseUnknownQueryParameters(v1)
    await v1.register(pets)
    await v1.register(orders)
    await v1.register(events)
  }, { prefix: '/v1' })
}

function trustHops (hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}
