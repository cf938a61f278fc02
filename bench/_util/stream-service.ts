import { setTimeout as sleep } from 'node:timers/promises'
import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import { execSql } from '../../tools/harness/store-sql.js'
import type { BenchContext } from './bench-context.js'
import { burstCreates, petIds, quantile, type Created } from './create-load.js'
import { metricsUrlOf, startService, stopServer } from './servers.js'
import type { StreamReader } from './stream-readers.js'

// a stream's first message may wait for the instance to LISTEN (PostgreSQL) and its tail's first read
const WARM_UP_TIMEOUT_MS = 15_000

/**
 * A new empty store and `instances` services on it (production defaults and `env`; the first migrates it),
 * started one after the other. Everything is stopped and dropped after `work`.
 */
export async function withStreamService<T> (context: BenchContext, kind: StoreKind, instances: number, env: Record<string, string>,
  work: (services: ServerProcess[], storeUrl: string) => Promise<T>): Promise<T> {
  const store = await scratchStore(kind, 'streams', context.pgServerUrl)
  const services: ServerProcess[] = []
  try {
    for (let i = 0; i < instances; i++) services.push(await startService(store.url, context.apiKey, { env }))
    return await work(services, store.url)
  } finally {
    await Promise.all(services.map(async (service) => await stopServer(service)))
    await store.drop()
  }
}

/**
 * Puts `count` copies of the newest `pet.created` event in the feed of `storeUrl`, in one statement: a backlog for a stream
 * that starts from the oldest event, written in a moment (through HTTP, 25,000 creates take a minute). Only while no
 * stream is open and nothing else writes: no instance is told of them.
 */
export async function copyNewestEvent (kind: StoreKind, storeUrl: string, count: number): Promise<void> {
  const newest = "(SELECT type, occurred_at, data FROM events WHERE type = 'pet.created' ORDER BY id DESC LIMIT 1) AS e"
  await execSql(storeUrl, kind === 'sqlite'
    ? `WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < $1) INSERT INTO events (type, occurred_at, data) SELECT e.type, e.occurred_at, e.data FROM seq, ${newest}`
    : `INSERT INTO events (type, occurred_at, data) SELECT e.type, e.occurred_at, e.data FROM generate_series(1, $1::int), ${newest}`, [count])
}

/** Resolves true once `reader` has received the events of every pet in `pets`, false after `timeoutMs`. */
export async function waitForPets (reader: StreamReader, pets: ReadonlySet<string>, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const seen = new Set(reader.receipts.map((receipt) => receipt.petId))
    if ([...pets].every((pet) => seen.has(pet))) return true
    if (performance.now() > deadline || reader.endedAt !== undefined) return false
    await sleep(20)
  }
}

/** One create through each of `services`, each heard by every one of `readers`: the streams and the instances' signals are up. */
export async function warmUp (services: readonly ServerProcess[], headers: Record<string, string>, readers: readonly StreamReader[]): Promise<void> {
  for (const service of services) {
    const pets = petIds(await burstCreates(service.baseUrl, headers, 1, 1))
    for (const reader of readers) {
      if (!await waitForPets(reader, pets, WARM_UP_TIMEOUT_MS)) throw new Error(`a stream did not hear the warm-up create within ${WARM_UP_TIMEOUT_MS} ms`)
    }
  }
}

/** The ids of the `pet.created` events after `after`, read from the JSON feed (pages of 100) until `count` of them are in. */
export async function feedIds (baseUrl: string, headers: Record<string, string>, after: number, count: number): Promise<number[]> {
  const ids: number[] = []
  let position = after
  while (ids.length < count) {
    const response = await fetch(`${baseUrl}/v1/events?type=pet.created&limit=100&after=${position}`, { headers, signal: AbortSignal.timeout(30_000) })
    if (response.status !== 200) throw new Error(`the JSON feed answered ${response.status}`)
    const page = await response.json() as Array<{ id: number | string }>
    if (page.length === 0) break
    ids.push(...page.map((event) => Number(event.id)))
    position = ids.at(-1) as number
  }
  return ids
}

/** The service's count of streams it ended for `reason` (`petstore_event_streams_ended_total`); undefined when its metrics do not say. */
export async function streamsEnded (service: ServerProcess, reason: 'backlog' | 'shutdown' | 'failed'): Promise<number | undefined> {
  const url = metricsUrlOf(service)
  if (url === undefined) return undefined
  const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text()
  const value = new RegExp(`^petstore_event_streams_ended_total\\{reason="${reason}"\\} (\\S+)$`, 'm').exec(text)?.[1]
  return value === undefined ? undefined : Number(value)
}

/** The service's open streams (`petstore_event_streams_open`). */
export async function streamsOpen (service: ServerProcess): Promise<number | undefined> {
  const url = metricsUrlOf(service)
  if (url === undefined) return undefined
  const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text()
  const value = /^petstore_event_streams_open(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1]
  return value === undefined ? undefined : Number(value)
}

/** createPet's p50 (send to 201) over a run; NaN when none was answered 201. */
export function createP50 (created: readonly Created[]): number {
  return quantile(created.filter((c) => c.status === 201).map((c) => c.answeredAt - c.sentAt), 0.5)
}
