import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback } from 'fastify'
import { buses } from './capabilities/buses/index.js'
import { categories, categoriesRoutes } from './capabilities/categories/index.js'
import { docsRoutes, openApi } from './capabilities/docs/index.js'
import { events, eventsRoutes } from './capabilities/events/index.js'
import { healthRoutes } from './capabilities/health/index.js'
import { idempotency } from './capabilities/idempotency/index.js'
import { authenticate, authorize, keys } from './capabilities/keys/index.js'
import { orders, ordersRoutes } from './capabilities/orders/index.js'
import { pets, petsRoutes } from './capabilities/pets/index.js'
import { limitPerKey, rateLimits } from './capabilities/rate-limits/index.js'
import { webhookEndpointsRoutes, webhooks } from './capabilities/webhooks/index.js'
import type { Config } from './infra/config/config.js'
import { backgroundWork } from './infra/background/background-plugin.js'
import { databasePlugin } from './infra/database/database-plugin.js'
import { createServer } from './infra/http/create-server.js'
import { notFound } from './infra/http/error-handler.js'
import { httpFoundation } from './infra/http/http-foundation.js'
import { refuseUnknownQueryParameters } from './infra/http/query-parameters.js'
import { refuseTrailingSlashes } from './infra/http/trailing-slash.js'
import type { LogStream } from './infra/logging/logging.js'
import { systemClock, type Clock } from './infra/runtime/clock.js'

export type { RegisteredRoute } from './infra/http/http-foundation.js'

export interface AppOptions {
  config: Config
  clock?: Clock
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: LogStream
}

/** A capability as the app registers it: its plugin (store, services, background work) and its operations under `/v1`, if any. */
interface Capability {
  plugin: FastifyPluginAsync | FastifyPluginCallback
  routes?: FastifyPluginAsync
}

/**
 * The capabilities, one line each, in the order they are registered: each decorates the app with its store and
 * services, which the ones after it may use, and starts its background work on `app.background`; their routes are
 * registered in the same order under `/v1`, behind authentication, the per-key limit and the role check.
 */
const CAPABILITIES: readonly Capability[] = [
  { plugin: keys },
  { plugin: rateLimits },
  { plugin: idempotency },
  { plugin: pets, routes: petsRoutes },
  { plugin: orders, routes: ordersRoutes },
  { plugin: categories, routes: categoriesRoutes },
  { plugin: events, routes: eventsRoutes },
  { plugin: webhooks, routes: webhookEndpointsRoutes },
  { plugin: buses }
]

/**
 * Builds the whole service from its configuration: opens (and migrates) the database, registers every
 * capability. It never listens; `bin/server.ts` does. Closing the app drains HTTP, stops every capability's
 * background work at once (its work in flight awaited), then closes the database (infra/background/shutdown-budget.ts).
 */
export async function buildApp ({ config, clock = systemClock, logStream }: AppOptions): Promise<FastifyInstance> {
  // only when configured: unset, no OpenTelemetry module is loaded and requests pay nothing for it
  const tracing = config.tracing === undefined ? undefined : (await import('./infra/tracing/tracing.js')).startTracing(config.tracing, config.database)
  const app = createServer(config, logStream, tracing)
  try {
    await app.register(httpFoundation, { config, clock, tracing })
    await app.register(databasePlugin, { tracing })
    await app.register(backgroundWork)
    for (const { plugin } of CAPABILITIES) await app.register(plugin)
    // the document collects the routes registered after it
    await app.register(openApi)
    await app.register(healthRoutes)
    await app.register(docsRoutes)
    await app.register(async (v1) => {
      authenticate(v1, app.rateLimits)
      // after authentication: the limit is per key
      limitPerKey(v1)
      // after the limit, so a 403 carries the key's RateLimit fields like every answer to a valid key
      authorize(v1)
      v1.setNotFoundHandler(notFound)
      refuseTrailingSlashes(v1)
      refuseUnknownQueryParameters(v1)
      for (const { routes } of CAPABILITIES) if (routes !== undefined) await v1.register(routes)
    }, { prefix: '/v1' })
  } catch (error) {
    // whatever was opened so far (database, Redis) is closed by its onClose hook
    await app.close().catch(() => {})
    throw error
  }
  return app
}
