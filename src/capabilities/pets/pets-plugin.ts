import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import { registerEventTypes } from '../events/index.js'
import { CursorCodec } from './cursor.js'
import { PET_EVENTS } from './pet-event-schemas.js'
import { NewPetSchema, PetPatchSchema, PetSchema, PetsSchema, PetStatusSchema } from './pet-schemas.js'
import { createPetStore } from './store/create-pet-store.js'
import type { PetStore } from './store/pet-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The catalogue: pets, each change recorded with its event. */
    petStore: PetStore
    /** Signs and reads listPets' cursors, under a secret every instance of the database shares. */
    cursors: CursorCodec
  }
}

/** The pets capability: its store and cursors on the app's database, and its schemas as the document's components, its event types registered with the feed. */
export const pets = fp(async (app) => {
  app.decorate('petStore', app.instrumentStore(createPetStore(app.database)))
  const cursorSecret = await app.database.ensureSetting('cursor_secret', randomBytes(32).toString('base64url'))
  app.decorate('cursors', new CursorCodec(cursorSecret))
  for (const schema of [PetStatusSchema, NewPetSchema, PetPatchSchema, PetSchema, PetsSchema]) app.addSchema(schema)
  registerEventTypes(app, PET_EVENTS)
}, { name: 'petstore-pets', dependencies: ['petstore-database'] })
