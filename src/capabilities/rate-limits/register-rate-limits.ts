import { Counter } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { deploymentIdOf } from '../../infra/database/deployment-id.js'
import { settleHook } from '../../infra/http/settle-hook.js'
import { RateLimits } from './rate-limits.js'

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits
  }
}

/** The window of the failed-authentication limit (`AUTH_FAILURE_LIMIT` per window and client address). */
export const AUTH_FAILURE_WINDOW_MS = 60_000

// an outage of the counter store must not flood the log
const STORE_ERROR_LOG_INTERVAL_MS = 10_000

/**
 * Decorates the app with its {@link RateLimits}: counters in Redis when `REDIS_URL` is set (shared by
 * all instances), else in memory. Needs the app's database, clock and metrics.
 */
export const rateLimits = fp(async (app) => {
  const { config } = app
  // loaded only when used: ioredis alone adds about 20 MB to the process
  const redis = config.redisUrl === undefined ? undefined : await (await import('./redis.js')).connectRedis(config.redisUrl, app.log)
  if (redis !== undefined) app.addHook('onClose', async () => { redis.disconnect() })
  // one id per database: instances of one deployment share counters, staging and production never do
  const deploymentId = await deploymentIdOf(app.database)
  let lastErrorLoggedAt = -Infinity
  const perKey = config.rateLimitMax === 0 ? undefined : { name: 'per-key', quota: config.rateLimitMax, windowMs: config.rateLimitWindowMs }
  const failedAuth = { name: 'failed-auth', quota: config.authFailureLimit, windowMs: AUTH_FAILURE_WINDOW_MS }
  // each policy's series from the start, at 0: a rate() sees the first rejection (Prometheus's advice on missing series)
  const rejections = new Counter({ name: 'petstore_rate_limit_rejections_total', help: 'Requests answered 429, by rate-limit policy.', labelNames: ['policy'] as const, registers: [app.metrics.registry] })
  const storeErrors = new Counter({
    name: 'petstore_rate_limit_store_errors_total',
    help: 'Rate-limit checks skipped because the counter store (Redis) failed; those requests were served unlimited.',
    registers: [app.metrics.registry]
  })
  for (const policy of [perKey, failedAuth]) if (policy !== undefined) rejections.inc({ policy: policy.name }, 0)
  app.decorate('rateLimits', await RateLimits.register(app, {
    perKey,
    failedAuth,
    redis,
    namespace: `petstore:${deploymentId}:rate-limit:`,
    clock: app.clock,
    onRejected: (policy) => { rejections.inc({ policy: policy.name }) },
    onStoreError: (error) => {
      storeErrors.inc()
      const now = app.clock.now()
      if (error === undefined || now - lastErrorLoggedAt < STORE_ERROR_LOG_INTERVAL_MS) return
      lastErrorLoggedAt = now
      // code and message only: a Redis error carries the failed command, which may hold a password
      const { code, message } = error as { code?: unknown, message?: unknown }
      app.log.warn({ code, reason: message }, 'rate-limit check skipped: the counter store failed (fail open)')
    }
  }))
}, { name: 'petstore-rate-limits', dependencies: ['petstore-database'] })

/** After authentication, in `scope` (e.g. `/v1`): each request counts against its key's limit (429 beyond it). */
export function limitPerKey (scope: FastifyInstance): void {
  const { rateLimits } = scope
  scope.addHook('onRequest', (request, reply, done) => { settleHook(() => rateLimits.consumeForKey(request, reply), done) })
}
