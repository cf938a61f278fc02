/** The fuzzer's model of the catalogue: every pet it created and every Idempotency-Key it used. */
import type { LightMyRequestResponse } from 'fastify'
import { parseJson, stringifyJson } from '../../src/infra/json/exact-json.js'

/** A pet as the API answers it (read exactly: a category id beyond 2^53 is a bigint). */
export interface Pet { id: number, name: string, categoryId: number | bigint, status: string }

/** An answer's JSON body, read exactly: integers beyond 2^53 as bigints (as a client must read int64 values). */
export function readJson<T = unknown> (res: LightMyRequestResponse): T {
  return parseJson(res.body) as T
}

/** The integer that plain decimal digits denote: a number when safe, else a bigint (so 2^53 + 1 is never 2^53). */
export function exactInteger (text: string): number | bigint {
  const value = BigInt(text)
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}

/** The status lifecycle of the README (updatePet): where each status may move besides staying; sold is final. */
export const STATUS_MOVES: Record<string, readonly string[] | undefined> = { available: ['pending', 'sold'], pending: ['available', 'sold'], sold: [] }

/** The pets this fuzzer created (as their 201 or last 200 returned them) and the creates each Idempotency-Key stands for. */
export class CatalogueModel {
  /** Every pet created through the fuzzer, by id. */
  readonly pets = new Map<number, Pet>()
  readonly idempotency = new Map<string, { fingerprint: string, pet: Pet }>()
  /** Every order placed through the fuzzer, by id: its pet and status as the last answer gave them. */
  readonly orders = new Map<number, { petId: number, status: string }>()

  /** Whether the pet has a `placed` or `approved` order (then only the order moves its status). */
  hasOpenOrder (petId: number): boolean {
    return [...this.orders.values()].some((order) => order.petId === petId && (order.status === 'placed' || order.status === 'approved'))
  }

  /** The pets in id order, as a list pages them. */
  sortedPets (): Pet[] {
    return [...this.pets.values()].sort((a, b) => a.id - b.id)
  }
}

/** The `next` link of a list answer's Link header. */
export function nextLink (res: LightMyRequestResponse): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
}

/** JSON-equal values compare equal (key order, -0 and absent versus undefined do not matter); bigints compare exactly. */
export function canonical (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([key, inner]) => [key, canonical(inner)]))
}

/** What makes two creates the same for Idempotency-Key replays. */
export function fingerprint (pet: Record<string, unknown>): string {
  return stringifyJson([pet.name, pet.categoryId, pet.status ?? 'available'])
}

/** The Idempotency-Key as the README describes it: bare or quoted, 1–255 visible ASCII without spaces, quotes or backslashes; null when malformed. */
export function parseIdempotencyKeyHeader (header: string): string | null {
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header
  return /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/.test(key) ? key : null
}
