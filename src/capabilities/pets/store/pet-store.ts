import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { PetPrecondition, PetUpdateOutcome } from '../pet-update.js'
import type { NewPet, Pet, PetPatch, PetStatus } from '../pet-schemas.js'
import type { PetCounts } from './pet-counts.js'

/** A bound on one read of pets by id (the getPets of one turn): a page holds at most 100, a burst of getPets rarely more. */
export const MAX_PETS_PER_READ = 100

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

/**
 * The pets as stored. One implementation per engine, on the database's own connection; each change
 * records its event (the change feed's outbox) in its own transaction.
 */
export interface PetStore {
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
   * The number of pets in each status, exact as of the read: three rows kept by the database's triggers in
   * the transaction of every change of pets, never a count over the pets.
   */
  countPetsByStatus (): Promise<PetCounts>
  /**
   * A number that changes whenever pets may have been added or changed (by this process or any other), so
   * that list pages read at one version can be reused while it holds; undefined while the store
   * cannot tell (nothing may be reused then). Synchronous: it is asked on every list request.
   */
  listVersion (): number | undefined
}
