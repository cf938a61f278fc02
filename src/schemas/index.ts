import { ErrorSchema } from './error.js'
import { NewPetSchema, PetSchema, PetsSchema, PetStatusSchema } from './pet.js'

/** The named schemas, registered once with `addSchema`; they become the OpenAPI components. */
export const SHARED_SCHEMAS = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema, ErrorSchema] as const
