import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { Clock } from '../clock.js'
import { ApiError } from '../errors/catalogue.js'
import { addressBucket } from './client-address.js'

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

/** Counts one more request under a policy. */
type Limiter = (request: FastifyRequest) => Promise<Count | undefined>

/**
 * Fixed-window limits on top of @fastify/rate-limit's counters (in memory, or in Redis shared by
 * every instance). Answers carry the IETF `RateLimit-Policy` and `RateLimit` fields; over a
 * limit is a 429 Error with `Retry-After`. When the counter store fails, requests are served
 * (fail open) and the failure is reported to `onStoreError`.
 */
export class RateLimits {
  readonly #options: RateLimitsOptions
  readonly #perKey: Limiter | undefined
  readonly #failedAuth: Limiter
  // after a counter-store failure, checks are skipped for a moment: a Redis that stopped answering
  // would otherwise cost every request a timeout
  #skipUntil = 0

  private constructor (app: FastifyInstance, options: RateLimitsOptions) {
    this.#options = options
    this.#perKey = options.perKey === undefined
      ? undefined
      : this.#limiter(app, options.perKey, (request) => request.apiKey?.scope ?? 'none')
    this.#failedAuth = this.#limiter(app, options.failedAuth, (request) => `address:${addressBucket(request.ip)}`)
  }

  static async register (app: FastifyInstance, options: RateLimitsOptions): Promise<RateLimits> {
    await app.register(rateLimit, {
      global: false,
      // errors reach this module, which serves anyway but reports them
      skipOnError: false,
      ...(options.redis === undefined ? {} : { redis: options.redis, nameSpace: options.namespace })
    })
    return new RateLimits(app, options)
  }

  /** Counts a request of an authenticated key; throws a 429 when the key is over its limit. */
  async consumeForKey (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (this.#perKey === undefined || this.#options.perKey === undefined) return
    await this.#consume(this.#perKey, this.#options.perKey, request, reply, 'Too many requests for this API key')
  }

  /**
   * Counts a failed authentication of the request's address (in the shared count, when there is
   * one) and throws a 429 instead of letting the 401 go out when the address is over its limit.
   * Only failing requests are counted and refused: a valid key from the same address is served.
   */
  async recordFailedAuth (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.#consume(this.#failedAuth, this.#options.failedAuth, request, reply, 'Too many failed authentications from this address')
  }

  async #consume (limiter: Limiter, policy: RateLimitPolicy, request: FastifyRequest, reply: FastifyReply, what: string): Promise<void> {
    const count = await this.#count(limiter, request)
    if (count === undefined) return
    setHeaders(reply, policy, count)
    if (count.exceeded) {
      this.#options.onRejected(policy)
      throw tooMany(policy, count.resetSeconds, what)
    }
  }

  async #count (limiter: Limiter, request: FastifyRequest): Promise<Count | undefined> {
    if (this.#options.clock.now() < this.#skipUntil) {
      this.#options.onStoreError(undefined)
      return undefined
    }
    try {
      return await limiter(request)
    } catch (error) {
      this.#skipUntil = this.#options.clock.now() + STORE_FAILURE_BACKOFF_MS
      this.#options.onStoreError(error)
      return undefined
    }
  }

  #limiter (app: FastifyInstance, policy: RateLimitPolicy, keyGenerator: (request: FastifyRequest) => string): Limiter {
    const check = app.createRateLimit({ max: policy.quota, timeWindow: policy.windowMs, keyGenerator })
    return async (request) => {
      const result = await check(request)
      if (result.isAllowed) return undefined
      return { remaining: result.remaining, resetSeconds: Math.max(1, result.ttlInSeconds), exceeded: result.isExceeded }
    }
  }
}

function setHeaders (reply: FastifyReply, policy: RateLimitPolicy, count: Count): void {
  reply.header('ratelimit-policy', `"${policy.name}";q=${policy.quota};w=${Math.ceil(policy.windowMs / 1000)}`)
  reply.header('ratelimit', `"${policy.name}";r=${count.remaining};t=${count.resetSeconds}`)
}

function tooMany (policy: RateLimitPolicy, resetSeconds: number, what: string): ApiError {
  return new ApiError('rate_limited',
    `${what}: at most ${policy.quota} per ${Math.ceil(policy.windowMs / 1000)} s (policy "${policy.name}"); retry in ${resetSeconds} s.`,
    { 'retry-after': String(resetSeconds) })
}
