import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'

// a rate-limit check must never hold a request up for long: past this, it is skipped
export const REDIS_COMMAND_TIMEOUT_MS = 200
const REDIS_CONNECT_TIMEOUT_MS = 1000
// start-up waits this long for a first connection, then goes on (counting alone meanwhile)
const REDIS_STARTUP_WAIT_MS = 1000

/**
 * A Redis client that fails fast instead of queueing: while Redis is down or slow, each
 * command fails within {@link REDIS_COMMAND_TIMEOUT_MS} and the caller serves without it.
 * It reconnects by itself; the outage and the recovery are each logged once.
 */
export async function connectRedis (url: string, log: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    // reconnect soon, but never hammer a struggling server
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000)
  })
  let healthy = true
  redis.on('error', (error: Error & { code?: string }) => {
    if (!healthy) return
    healthy = false
    // code and message only: ioredis attaches the failed command, and an AUTH command holds the password
    log.warn({ code: error.code, reason: error.message }, 'Redis failed: rate limits are not enforced until it answers again (fail open)')
  })
  redis.on('ready', () => {
    if (healthy) return
    healthy = true
    log.info('Redis is reachable again: rate limits are shared again')
  })
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      redis.off('ready', done).off('error', done)
      resolve()
    }
    const timer = setTimeout(done, REDIS_STARTUP_WAIT_MS)
    redis.once('ready', done)
    redis.once('error', done)
  })
  return redis
}
