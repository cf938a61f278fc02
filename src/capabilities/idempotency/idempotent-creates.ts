import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../infra/runtime/clock.js'
import { ApiError, RETRY_AFTER_SECONDS } from '../../infra/errors/catalogue.js'
import { parseJson } from '../../infra/json/exact-json.js'
import type { Pet } from '../pets/pet-schemas.js'
import { IdempotencyClaimLostError } from './claims.js'
import type { NewPetRecord, PetStore } from '../pets/store/pet-store.js'
import { fingerprintOf } from './idempotency-key.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from './policy.js'

export interface IdempotentResult {
  /** The status the first request got (201). */
  status: number
  pet: Pet
  /** True when this is a repeat answered from the record, with nothing created. */
  replayed: boolean
}

/**
 * Creates pets at most once per (API key, Idempotency-Key) within {@link IDEMPOTENCY_TTL_MS}:
 * claim the key, create the pet and store its answer in one transaction, or replay, or refuse.
 */
export class IdempotentCreates {
  readonly #store: PetStore
  readonly #clock: Clock
  readonly #log: FastifyBaseLogger

  constructor (store: PetStore, clock: Clock, log: FastifyBaseLogger) {
    this.#store = store
    this.#clock = clock
    this.#log = log
  }

  async createPet (scope: string, key: string, pet: NewPetRecord): Promise<IdempotentResult> {
    const token = randomBytes(16).toString('base64url')
    const claim = await this.#store.claimIdempotencyKey({
      scope,
      key,
      fingerprint: fingerprintOf(pet),
      token,
      now: new Date(this.#clock.now()),
      leaseMs: IDEMPOTENCY_LEASE_MS,
      ttlMs: IDEMPOTENCY_TTL_MS
    })
    switch (claim.outcome) {
      case 'completed': return { status: claim.response.status, pet: parseJson(claim.response.body) as Pet, replayed: true }
      case 'mismatch': throw new ApiError('idempotency_key_reused', `Idempotency-Key "${key}" was already used with a different request body; use a new key for a new pet.`)
      case 'in_flight': throw new ApiError('idempotency_request_in_progress', `A request with Idempotency-Key "${key}" is still being processed; retry after it finishes.`, { 'retry-after': String(RETRY_AFTER_SECONDS) })
      case 'claimed': break
    }
    const completion = { scope, key, token }
    try {
      return { status: 201, pet: await this.#store.createPet(pet, completion), replayed: false }
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
