import { fingerprintOf } from '../idempotency/index.js'
import type { NewPetRecord } from './store/pet-store.js'

/**
 * The same pet asked for twice gives the same fingerprint, whatever the key order or spacing; a category id
 * beyond 2^53 is written digit for digit, so 2^53 + 1 and 2^53 + 2 differ (and an ordinary pet's fingerprint
 * is what it was before int64 values were exact).
 */
export function petFingerprint (pet: NewPetRecord): string {
  return fingerprintOf([pet.name, pet.categoryId, pet.status])
}
