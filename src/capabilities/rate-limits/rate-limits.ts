import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { Clock } from '../../infra/runtime/clock.js'
import { ApiError } from '../../infra/errors/catalogue.js'
import { addressBucket } from './client-address.js'
import { MemoryWindowCounter, type WindowCount } from './memory-counter.js'

/** A limit as the IETF RateLimit header fields name it: a quota per window. */
export interface RateLimitPolicy {
  /** The policy's name in `RateLimit-Policy` and `RateLimit`. */
  name: string
  /** Requests allowed per window. */
  quota: number
  windowMs: number
}

export interface RateLimitsOptions {
  /** Per API key; undefined when per-key limiting is off. */
  perKey: RateLimitPolicy | undefined
  /** Failed authentications per client address. */
  failedAuth: RateLimitPolicy
  /** Shared counters; undefined: this instance counts alone, in memory. */
  redis: Redis | undefined
  /** Prefix of every Redis key, so deployments sharing a Redis never share counters. */
  namespace: string
  clock: Clock
  onRejected: (policy: RateLimitPolicy) => void
  /** A check was skipped: the store failed (`error`), or failed a moment ago (undefined). */
  onStoreError: (error: unknown) => void
}

interface Count {
  remaining: number
  resetSeconds: number
  exceeded: boolean
}

// how long checks are skipped after the counter store failed
const STORE_FAILURE_BACKOFF_MS = 1000

/** Counts one more request under a policy: at once in memory, through a promise with Redis. */
type Limiter = (request: FastifyRequest) => Count | Promise<Count | undefined>

/** A policy with its `RateLimit-Policy` field, written once. */
interface Policy extends RateLimitPolicy {
  header: string
}

/**
 * Fixed-window limits, counted in memory ({@link MemoryWindowCounter}) or in Redis shared by every
 * instance (@fastify/rate-limit's counters). Answers carry the IETF `RateLimit-Policy` and `RateLimit` fields; over a
 * limit is a 429 Error with `Retry-After`. When the counter store fails, requests are served
 * (fail open) and the failure is reported to `onStoreError`.
 */
export class RateLimits {
  readonly #options: RateLimitsOptions
  readonly #perKey: { limiter: Limiter, policy: Policy } | undefined
  readonly #failedAuth: { limiter: Limiter, policy: Policy }
  // after a counter-store failure, checks are skipped for a moment: a Redis that stopped answering
  // would otherwise cost every request a timeout
  #skipUntil = 0

  private constructor (app: FastifyInstance, options: RateLimitsOptions) {
    this.#options = options
    const limiterFor = (policy: RateLimitPolicy, keyOf: (request: FastifyRequest) => string) => ({
      limiter: options.redis === undefined ? this.#memoryLimiter(policy, keyOf) : this.#sharedLimiter(app, policy, keyOf),
      policy: { ...policy, header: `"${policy.name}";q=${policy.quota};w=${Math.ceil(policy.windowMs / 1000)}` }
    })
    this.#perKey = options.perKey === undefined ? undefined : limiterFor(options.perKey, (request) => request.apiKey?.scope ?? 'none')
    this.#failedAuth = limiterFor(options.failedAuth, (request) => `address:${addressBucket(request.ip)}`)
  }

  static async register (app: FastifyInstance, options: RateLimitsOptions): Promise<RateLimits> {
    if (options.redis !== undefined) {
      // loaded only with Redis: in-memory counters do not need it (memory-counter.ts)
      const { default: rateLimit } = await import('@fastify/rate-limit')
      await app.register(rateLimit, {
        global: false,
        // errors reach this module, which serves anyway but reports them
        skipOnError: false,
        redis: options.redis,
        nameSpace: options.namespace
      })
    }
    return new RateLimits(app, options)
  }

  /**
   * Counts a request of an authenticated key and throws a 429 when the key is over its limit; returns
   * a promise only when the count has to wait (Redis).
   */
  consumeForKey (request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
    if (this.#perKey === undefined) return
    return this.#consume(this.#perKey.limiter, this.#perKey.policy, request, reply, 'Too many requests for this API key')
  }

  /**
   * Counts a failed authentication of the request's address (in the shared count, when there is
   * one) and throws a 429 instead of letting the 401 go out when the address is over its limit.
   * Only failing requests are counted and refused: a valid key from the same address is served.
   */
  async recordFailedAuth (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.#consume(this.#failedAuth.limiter, this.#failedAuth.policy, request, reply, 'Too many failed authentications from this address')
  }

  #consume (limiter: Limiter, policy: Policy, request: FastifyRequest, reply: FastifyReply, what: string): void | Promise<void> {
    const count = this.#count(limiter, request)
    if (count instanceof Promise) return count.then((settled) => { this.#judge(settled, policy, reply, what) })
    this.#judge(count, policy, reply, what)
  }

  #judge (count: Count | undefined, policy: Policy, reply: FastifyReply, what: string): void {
    if (count === undefined) return
    reply.header('ratelimit-policy', policy.header)
    reply.header('ratelimit', `"${policy.name}";r=${count.remaining};t=${count.resetSeconds}`)
    if (count.exceeded) {
      this.#options.onRejected(policy)
      throw tooMany(policy, count.resetSeconds, what)
    }
  }

  /** The count, or undefined when the counter store failed (the request is then served: fail open). */
  #count (limiter: Limiter, request: FastifyRequest): Count | undefined | Promise<Count | undefined> {
    if (this.#options.clock.now() < this.#skipUntil) {
      this.#options.onStoreError(undefined)
      return undefined
    }
    const failed = (error: unknown): undefined => {
      this.#skipUntil = this.#options.clock.now() + STORE_FAILURE_BACKOFF_MS
      this.#options.onStoreError(error)
      return undefined
    }
    try {
      const count = limiter(request)
      return count instanceof Promise ? count.catch(failed) : count
    } catch (error) {
      return failed(error)
    }
  }

  #memoryLimiter (policy: RateLimitPolicy, keyOf: (request: FastifyRequest) => string): Limiter {
    const counter = new MemoryWindowCounter(policy.windowMs, this.#options.clock)
    return (request) => countOf(policy, counter.increment(keyOf(request)))
  }

  #sharedLimiter (app: FastifyInstance, policy: RateLimitPolicy, keyGenerator: (request: FastifyRequest) => string): Limiter {
    const check = app.createRateLimit({ max: policy.quota, timeWindow: policy.windowMs, keyGenerator })
    return async (request) => {
      const result = await check(request)
      if (result.isAllowed) return undefined
      return { remaining: result.remaining, resetSeconds: Math.max(1, result.ttlInSeconds), exceeded: result.isExceeded }
    }
  }
}

/** What a window's count means under a policy. */
function countOf (policy: RateLimitPolicy, { current, ttlMs }: WindowCount): Count {
  return { remaining: Math.max(0, policy.quota - current), resetSeconds: Math.max(1, Math.ceil(ttlMs / 1000)), exceeded: current > policy.quota }
}

function tooMany (policy: RateLimitPolicy, resetSeconds: number, what: string): ApiError {
  return new ApiError('rate_limited',
    `${what}: at most ${policy.quota} per ${Math.ceil(policy.windowMs / 1000)} s (policy "${policy.name}"); retry in ${resetSeconds} s.`,
    { 'retry-after': String(resetSeconds) })
}
