import { ErrorSchema } from '../infra/schemas/error.js'
import { EventSchema, EventsSchema, PetChangesSchema, PetCreatedEventSchema, PetUpdatedEventSchema } from './events/event-schemas.js'
import { NewPetSchema, PetPatchSchema, PetSchema, PetsSchema, PetStatusSchema } from './pets/pet-schemas.js'

/** The named schemas, registered once with `addSchema`; they become the OpenAPI components. */
export const SHARED_SCHEMAS = [PetStatusSchema, NewPetSchema, PetPatchSchema, PetSchema, PetsSchema, ErrorSchema,
  PetChangesSchema, PetCreatedEventSchema, PetUpdatedEventSchema, EventSchema, EventsSchema] as const
