import type { FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config/config.js'
import type { Clock } from '../runtime/clock.js'
import { httpMetrics } from '../metrics/http-metrics.js'
import { errorSchema } from '../schemas/error.js'
import type { Tracing } from '../tracing/tracing.js'
import { answerHeaders } from './answer-headers.js'
import { acceptJsonBodiesOnly } from './content-types.js'
import { drainOnClose } from './drain.js'
import { handleError, notFound } from './error-handler.js'
import { loadShedding } from './load-shedding.js'
import { registerCors } from './security.js'

/** A route as registered: what route listings (tests, audits) walk. */
export interface RegisteredRoute {
  method: string
  url: string
  /** True for the stand-ins that only answer 405. */
  methodNotAllowed: boolean
  /** True for the stand-ins that only answer 404 (paths that end in "/"). */
  notFound: boolean
  /** Its schema as registered: what its validators and serializers are compiled from, on first use (test/infra/http/schemas.test.ts). */
  schema: FastifySchema | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    clock: Clock
    /** Every route registered, in order (HEAD routes Fastify adds included). */
    registeredRoutes: readonly RegisteredRoute[]
  }
}

export interface HttpFoundationOptions {
  config: Config
  clock: Clock
  tracing: Tracing | undefined
}

/**
 * What every answer goes through, before any capability: the request span, the request id and security
 * headers, metrics, load shedding, CORS, the SIGTERM drain, JSON bodies only, and the Error body for every failure.
 */
export const httpFoundation = fp<HttpFoundationOptions>(async (app, { config, clock, tracing }) => {
  if (tracing !== undefined) {
    // first: the request span must enclose every hook, the key look-up included
    await app.register(tracing.plugin)
    app.addHook('onClose', tracing.shutdown)
  }
  app.decorate('config', config)
  app.decorate('clock', clock)
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
  // before CORS, the drain and every capability's hook: a shed request costs as little as it can
  await app.register(loadShedding, { settings: config.overload })
  await registerCors(app, config.corsOrigins)
  await app.register(drainOnClose)
  app.addSchema(errorSchema())
  acceptJsonBodiesOnly(app)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFound)
}, { name: 'petstore-http-foundation' })
