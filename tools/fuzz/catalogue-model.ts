/** The fuzzer's model of the catalogue: every pet it created and every Idempotency-Key it used. */
import type { LightMyRequestResponse } from 'fastify'

/** A pet as the API answers it. */
export interface Pet { id: number, name: string, categoryId: number, status: string }

/** The status lifecycle of the README (updatePet): where each status may move besides staying; sold is final. */
export const STATUS_MOVES: Record<string, readonly string[] | undefined> = { available: ['pending', 'sold'], pending: ['available', 'sold'], sold: [] }

/** The pets this fuzzer created (as their 201 or last 200 returned them) and the creates each Idempotency-Key stands for. */
export class CatalogueModel {
  /** Every pet created through the fuzzer, by id. */
  readonly pets = new Map<number, Pet>()
  readonly idempotency = new Map<string, { fingerprint: string, pet: Pet }>()

  /** The pets in id order, as a list pages them. */
  sortedPets (): Pet[] {
    return [...this.pets.values()].sort((a, b) => a.id - b.id)
  }
}

/** The `next` link of a list answer's Link header. */
export function nextLink (res: LightMyRequestResponse): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
}

/** JSON-equal values compare equal (key order and -0 do not matter). */
export function canonical (value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner))
}

/** What makes two creates the same for Idempotency-Key replays. */
export function fingerprint (pet: Record<string, unknown>): string {
  return JSON.stringify([pet.name, pet.categoryId, pet.status ?? 'available'])
}

/** The Idempotency-Key as the README describes it: bare or quoted, 1–255 visible ASCII without spaces, quotes or backslashes; null when malformed. */
export function parseIdempotencyKeyHeader (header: string): string | null {
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header
  return /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/.test(key) ? key : null
}
