import type { ApiKeyRole } from '../../keys/roles.js'
import type { IdempotencyClaim, IdempotencyClaimRequest, IdempotencyCompletion } from '../../idempotency/claims.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { PetPrecondition, PetUpdateOutcome } from '../pet-update.js'
import type { NewPet, Pet, PetPatch, PetStatus } from '../pet-schemas.js'

/** A pet to insert: a NewPet with its status decided (the default applied); the store assigns the id. */
export type NewPetRecord = Required<NewPet>

/** One page of the catalogue, in id order, starting after `afterId`. */
export interface PetPageQuery {
  status?: PetStatus | undefined
  afterId?: number | undefined
  limit: number
}

export interface PetPage {
  pets: Pet[]
  /** True when at least one more pet matches after the last one in `pets`. */
  hasMore: boolean
}

/** An API key as stored: only the SHA-256 hash of the key, never the key. */
export interface ApiKeyRecord {
  id: number
  name: string
  role: ApiKeyRole
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

/**
 * Everything the service persists. One implementation per engine;
 * handlers only ever see this interface.
 */
export interface PetStore {
  /** Human-readable description of where the data lives, for logs (never credentials). */
  readonly description: string

  /**
   * Inserts a pet; resolves only once the write is durable. With `completing`, the claim's
   * record gets the 201 answer in the same transaction, so the pet and its record exist
   * together or not at all; a claim no longer held throws IdempotencyClaimLostError and inserts nothing.
   */
  createPet (pet: NewPetRecord, completing?: IdempotencyCompletion): Promise<Pet>
  /** `id` may be any int64 (a petId a client asked for); only ids the store assigned find a pet. */
  findPetById (id: Int64): Promise<Pet | undefined>
  /**
   * Changes a pet in one transaction: reads its row locked, judges it with `decidePetUpdate`
   * (`precondition`, the If-Match check, on that row), and writes only when something changes, so
   * racing updates are serialised and each is judged on the state the other left. Resolves once the
   * write is durable; a write moves {@link PetStore.listVersion}, here and on other instances.
   */
  updatePet (id: Int64, patch: PetPatch, precondition?: PetPrecondition): Promise<PetUpdateOutcome>
  listPets (query: PetPageQuery): Promise<PetPage>
  /**
   * A number that changes whenever pets may have been added or changed (by this process or any other), so
   * that list pages read at one version can be reused while it holds; undefined while the store
   * cannot tell (nothing may be reused then). Synchronous: it is asked on every list request.
   */
  listVersion (): number | undefined

  /** Stores a new key's hash; `role` defaults to `write` (full access). */
  createApiKey (name: string, keyHash: string, role?: ApiKeyRole): Promise<ApiKeyRecord>
  /** The active (not revoked) key with this hash. */
  findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined>
  listApiKeys (): Promise<ApiKeyRecord[]>
  /** Revokes an active key; false when no active key has this id. */
  revokeApiKey (id: number): Promise<boolean>
  /** Records that a key was used; callers throttle it. */
  touchApiKey (id: number, usedAt: Date): Promise<void>
  /**
   * Creates a write key only if no key was ever created (revoked ones count), atomically
   * even when several instances try at once; undefined when a key already existed.
   */
  createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined>

  /** Claims an Idempotency-Key for a request, or says why not (atomic across instances). */
  claimIdempotencyKey (request: IdempotencyClaimRequest): Promise<IdempotencyClaim>
  /** Drops a claim still in flight (its request failed), so a retry runs afresh. */
  releaseIdempotencyKey (claim: IdempotencyCompletion): Promise<void>
  /** Deletes records that expired before `now`; returns how many. */
  deleteExpiredIdempotencyKeys (now: Date): Promise<number>

  /** Returns the setting, storing `initialValue` first if it is not set yet. */
  ensureSetting (name: string, initialValue: string): Promise<string>

  /** Applies pending migrations; returns the schema version afterwards. */
  migrate (): Promise<MigrationResult>
  /** Resolves when the store answers a trivial query; rejects otherwise. */
  ping (): Promise<void>
  close (): Promise<void>
}

export interface MigrationResult {
  version: number
  applied: string[]
}
