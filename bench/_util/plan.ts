/** How long and how often a run measures: `npm run bench` (full) or `-- --quick` (what CI runs). */
export interface Plan {
  quick: boolean
  /** Rounds of each A/B comparison: every contender is measured once per round, in turn. */
  rounds: number
  /** Load before a contender's first timed run of a scenario (rounds after the first find it warm). */
  warmupSeconds: number
  /** One timed run. */
  durationSeconds: number
  coldStarts: number
  /** The large store of the store-size comparison. */
  bigStorePets: number
}

/**
 * The full plan, or the quick one CI runs (it only reports): 2 rounds of 1 s (wrk's shortest run; over a
 * thousand requests even for the slowest server), 1 cold start, 100,000 pets standing in for 1,000,000.
 */
export function planFor (quick: boolean): Plan {
  return quick
    ? { quick, rounds: 2, warmupSeconds: 1, durationSeconds: 1, coldStarts: 1, bigStorePets: 100_000 }
    : { quick, rounds: 3, warmupSeconds: 3, durationSeconds: 10, coldStarts: 3, bigStorePets: 1_000_000 }
}

/** Concurrent connections of every load. */
export const CONNECTIONS = 50
/** Pets in the stores the scenarios run on. */
export const SEED_PETS = 100_000
/**
 * The fastest placeOrder any server is expected to answer, per second: each orders pets of a block of its own,
 * sized for this rate over all its runs ({@link orderablePetsPerServer}). A server faster than this runs out
 * of pets, and the scenario fails saying so.
 */
export const ORDER_RATE_CEILING = 20_000
/** Available pets seeded for each server that takes placeOrder: its warm-up and every timed run at {@link ORDER_RATE_CEILING}. */
export function orderablePetsPerServer (plan: Plan): number {
  const runs = 1 + plan.rounds
  // a run draws a few ids it never sends (wrk builds one request to check it); the scenario's check by hand takes one
  return Math.ceil(ORDER_RATE_CEILING * (plan.warmupSeconds + plan.rounds * plan.durationSeconds)) + runs * (CONNECTIONS + 1) + 1
}
/** The small store of the store-size comparison. */
export const SMALL_STORE_PETS = 1_000
/** A first page of listPets, the request most scenarios are built on. */
export const LIST_PATH = '/v1/pets?limit=20&status=available'
export const CREATE_BODY = JSON.stringify({ name: 'Bench pet', categoryId: 3, status: 'available' })
/** placeOrder's body around the id of the pet it orders. */
export const ORDER_BODY = { before: '{"petId":', after: '}' } as const

/** A progress line on stderr (stdout carries the report). */
export function log (line: string): void {
  process.stderr.write(`bench: ${line}\n`)
}
