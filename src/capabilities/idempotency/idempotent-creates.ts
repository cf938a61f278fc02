import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { Clock } from '../../infra/runtime/clock.js'
import { ApiError, RETRY_AFTER_SECONDS } from '../../infra/errors/catalogue.js'
import { parseJson } from '../../infra/json/exact-json.js'
import { IdempotencyClaimLostError, type IdempotencyCompletion } from './claims.js'
import { parseIdempotencyKey } from './idempotency-key.js'
import type { IdempotencyStore } from './store/idempotency-store.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from './policy.js'

export interface IdempotentResult<T> {
  /** The status the first request got (201). */
  status: number
  /** The resource as created, or as the record replays it. */
  created: T
  /** True when this is a repeat answered from the record, with nothing created. */
  replayed: boolean
}

/** What createOnce reads of a create request: who asks (null when keys are off) and its `Idempotency-Key`. */
export interface CreateRequest {
  apiKey: { scope: string } | null
  headers: { 'idempotency-key'?: string | string[] | undefined }
}

/**
 * Creates at most once per (API key, Idempotency-Key) within {@link IDEMPOTENCY_TTL_MS}: claim the key,
 * create the resource and store its answer in one transaction (the creating store completes the claim), or
 * replay, or refuse.
 */
export class IdempotentCreates {
  readonly #store: IdempotencyStore
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger

  constructor (store: IdempotencyStore, clock: Clock, log: FastifyBaseLogger) {
    this.#store = store
    this.#clock = clock
    this.#log = log
  }

  /**
   * The idempotent create of a route (createPet, placeOrder), written once: without an `Idempotency-Key`
   * (or without keys) `create` runs as is; with one, at most once for the key (see create), a repeat marked
   * `Idempotent-Replayed: true`. Sets the reply's status and resolves to the resource to answer.
   * `fingerprint` is asked for only when there is a key.
   */
  async createOnce<T> (request: CreateRequest, reply: FastifyReply, fingerprint: () => string,
    create: (completing?: IdempotencyCompletion) => Promise<T>): Promise<T> {
    const key = parseIdempotencyKey(request.headers['idempotency-key'])
    if (key === undefined || request.apiKey === null) {
      const created = await create()
      reply.code(201)
      return created
    }
    const { status, created, replayed } = await this.create(request.apiKey.scope, key, fingerprint(), create)
    if (replayed) reply.header('idempotent-replayed', 'true')
    reply.code(status)
    return created
  }

  /**
   * Runs `create` once for this key: `fingerprint` (fingerprintOf) tells a repeat from another request with
   * the same key; `create` must complete the claim it is given in its own transaction, and throw
   * IdempotencyClaimLostError when the claim was no longer held.
   */
  async create<T> (scope: string, key: string, fingerprint: string, create: (completing: IdempotencyCompletion) => Promise<T>): Promise<IdempotentResult<T>> {
    const token = randomBytes(16).toString('base64url')
    const claim = await this.#store.claimIdempotencyKey({
      scope,
      key,
      fingerprint,
      token,
      now: new Date(this.#clock.now()),
      leaseMs: IDEMPOTENCY_LEASE_MS,
      ttlMs: IDEMPOTENCY_TTL_MS
    })
    switch (claim.outcome) {
      case 'completed': return { status: claim.response.status, created: parseJson(claim.response.body) as T, replayed: true }
      case 'mismatch': throw new ApiError('idempotency_key_reused', `Idempotency-Key "${key}" was already used with a different request body; use a new key for a new request.`)
      case 'in_flight': throw new ApiError('idempotency_request_in_progress', `A request with Idempotency-Key "${key}" is still being processed; retry after it finishes.`, { 'retry-after': String(RETRY_AFTER_SECONDS) })
      case 'claimed': break
    }
    const completion = { scope, key, token }
    try {
      return { status: 201, created: await create(completion), replayed: false }
    } catch (error) {
      if (error instanceof IdempotencyClaimLostError) {
        throw new ApiError('idempotency_request_in_progress', `Another request with Idempotency-Key "${key}" took over; retry to get its answer.`, { 'retry-after': String(RETRY_AFTER_SECONDS) })
      }
      // nothing was stored, so a retry must run afresh; if this fails too, the lease runs out instead
      await this.#store.releaseIdempotencyKey(completion).catch((releaseError: unknown) => {
        this.#log.warn({ err: releaseError }, 'could not release an Idempotency-Key claim; it expires with its lease')
      })
      throw error
    }
  }
}
