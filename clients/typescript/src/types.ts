import type { components, operations } from './generated/openapi.js'

/** An animal as the service returns it. */
export type Pet = components['schemas']['Pet']

/** A pet to add; `status` defaults to `available` on the service. */
export type NewPet = components['schemas']['NewPet']

/** The fields of a pet to change (a JSON Merge Patch); fields left out keep their value. */
export type PetPatch = components['schemas']['PetPatch']

/** Availability of an animal: `available`, `pending` or `sold`. */
export type PetStatus = components['schemas']['PetStatus']

/** The body of every error answer of the service. */
export type ErrorBody = components['schemas']['Error']

/** The codes the service puts in an Error body (a stable set; new ones may be added). */
export type ServiceErrorCode = ErrorBody['code']

/** The query of `listPets`: page size, status filter and the cursor of a previous page. */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>

/** What `updatePet` answers: the pet as it now is, and its entity tag. */
export interface UpdatedPet {
  pet: Pet
  /**
   * The pet's current `ETag` (the one `getPet` sends for it): pass it as `ifMatch` to the next
   * `updatePet` to make that change only if nobody changed the pet in between.
   */
  etag: string
}

/** One page of `listPets`. */
export interface PetPage {
  /** The pets of this page, in `id` order. */
  pets: Pet[]
  /**
   * Where the next page starts, taken from the answer's `Link: <…>; rel="next"`; absent on the
   * last page. Pass it back as `cursor` with the same `status` (a cursor is bound to its filter).
   */
  nextCursor?: string
}
