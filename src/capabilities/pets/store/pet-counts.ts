import { PET_STATUSES, type PetStatus } from '../pet-schemas.js'

/** The number of pets in each status. */
export type PetCounts = Record<PetStatus, number>

/** A pet_counts row (PostgreSQL's bigint arrives as a number: counts stay below 2^53). */
export interface PetCountRow {
  status: PetStatus
  pets: number | bigint | string
}

export function countsOf (rows: readonly PetCountRow[]): PetCounts {
  const counts = Object.fromEntries(PET_STATUSES.map((status) => [status, 0])) as PetCounts
  for (const row of rows) counts[row.status] = Number(row.pets)
  return counts
}
