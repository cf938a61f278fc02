/**
 * The catalogue: pets and their lifecycle (listPets, createPet, getPet, updatePet), the store that
 * keeps them with the events of each change, and the schemas and prose other capabilities build on.
 */
export { pets } from './pets-plugin.js'
export { default as petsRoutes } from './pets-routes.js'
export { MAX_EXACT_INTEGER, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PET_NAME_MAX_LENGTH, PET_STATUSES, type Pet, type PetStatus } from './pet-schemas.js'
export {
  PET_CREATED_EXAMPLE, PET_EVENTS, PET_UPDATED_EXAMPLE, PetChangesSchema, PetCreatedEventSchema, PetUpdatedEventSchema,
  type PetChanges, type PetCreatedEvent, type PetUpdatedEvent
} from './pet-event-schemas.js'
export { describeTransitions, FINAL_STATUSES, STATUS_TRANSITIONS } from './status-transitions.js'
export { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT, GET_PET_SUNSET_DATE, GET_PET_SUNSET_PROSE } from './get-pet-deprecation.js'
export { PAGE_CACHE_MAX_AGE_MS } from './page-cache.js'
export type { PetStore } from './store/pet-store.js'
export type { PetCounts } from './store/pet-counts.js'
export type { PetCategoryCounts } from './store/pet-category-counts.js'
export { categoryIdSchema, INT64_IN_JAVASCRIPT, nameSchema, petIdSchema } from './pet-schemas.js'
export { PostgresPetMoves, SqlitePetMoves, type PetMove } from './store/pet-moves.js'
export { registerPostgresOpenOrders, registerSqliteOpenOrders } from './store/open-orders.js'
