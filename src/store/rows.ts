import type { Pet, PetStatus } from '../schemas/pet.js'

/** A pets row as both engines return it (ids as numbers: both keep them within 2^53 − 1). */
export interface PetRow {
  id: number
  name: string
  category_id: number
  status: PetStatus
}

export function rowToPet (row: PetRow): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status }
}

/** The pets columns every query returns, in the order of {@link PetRow}. */
export const PET_COLUMNS = 'id, name, category_id, status'
