import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { addBearerAuth } from './auth/bearer-auth.js'
import type { Config } from './config.js'
import { acceptJsonBodiesOnly } from './content-types.js'
import { ApiError, BODY_LIMIT_BYTES, handleClientError, handleError, sendError } from './errors.js'
import { registerOpenApi } from './openapi.js'
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
  }
}

export interface AppOptions {
  config: Config
  clock?: Clock
}

const systemClock: Clock = { now: () => Date.now() }

/** How long a client may take to send a whole request; shorter than the drain on SIGTERM. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * Builds the whole service from its configuration: opens (and migrates) the store,
 * registers every route. It never listens; `server.ts` does. Closing the app closes the store.
 */
export async function buildApp ({ config, clock = systemClock }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' }
    },
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

  const registeredRoutes: RegisteredRoute[] = []
  app.decorate('registeredRoutes', registeredRoutes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      registeredRoutes.push({ method, url: route.url, methodNotAllowed: route.config?.methodNotAllowed === true })
    }
  })

  const { store } = await openStore(config.database, {
    onBackgroundError: (error) => { app.log.warn({ err: error }, 'store connection failed while idle') }
  })
  app.addHook('onClose', async () => { await store.close() })
  app.decorate('config', config)
  app.decorate('clock', clock)
  app.decorate('store', store)
  const cursorSecret = await store.ensureSetting('cursor_secret', randomBytes(32).toString('base64url'))
  app.decorate('cursors', new CursorCodec(cursorSecret))

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
  await app.register(async (v1) => {
    addBearerAuth(v1, { environmentKeys: config.apiKeys, cacheMs: config.apiKeyCacheMs })
    v1.setNotFoundHandler(notFound)
    await v1.register(pets)
    await v1.register(orders)
  }, { prefix: '/v1' })

  return app
}

async function notFound (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await sendError(reply, new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}; the API is described at /v1/openapi.json.`))
}
