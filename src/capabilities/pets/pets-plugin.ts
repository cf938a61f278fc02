import fp from 'fastify-plugin'
import { PagedList } from '../../infra/http/paged-list.js'
import { registerEventTypes } from '../events/index.js'
import { PETS_LIST } from './list-query.js'
import { PET_EVENTS } from './pet-event-schemas.js'
import { NewPetSchema, PetPatchSchema, PetSchema, PetsSchema, PetStatusSchema } from './pet-schemas.js'
import { createPetStore } from './store/create-pet-store.js'
import { createPetCategoryCounts, type PetCategoryCounts } from './store/pet-category-counts.js'
import type { PetStore } from './store/pet-store.js'
import { PetMetrics } from './pet-metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The pets' metrics (status transitions, deprecated getPet calls). */
    petMetrics: PetMetrics
    /** The catalogue: pets, each change recorded with its event. */
    petStore: PetStore
    /** The pets by category (the ids they carry, their counts by status): what other capabilities ask of pets' categories. */
    petCategoryCounts: PetCategoryCounts
    /** listPets' cursors and links, under a secret every instance of the database shares. */
    petList: PagedList<'status'>
  }
}

/** The pets capability: its store and cursors on the app's database, and its schemas as the document's components, its event types registered with the feed. */
export const pets = fp(async (app) => {
  app.decorate('petStore', app.instrumentStore(createPetStore(app.database, app.clock)))
  app.decorate('petCategoryCounts', app.instrumentStore(createPetCategoryCounts(app.database)))
  app.decorate('petList', await PagedList.open(app.database, PETS_LIST))
  app.decorate('petMetrics', new PetMetrics(app.metrics.registry))
  for (const schema of [PetStatusSchema, NewPetSchema, PetPatchSchema, PetSchema, PetsSchema]) app.addSchema(schema)
  registerEventTypes(app, PET_EVENTS)
}, { name: 'petstore-pets', dependencies: ['petstore-database'] })
