import type { Event } from './events.js'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import type { StoreKind } from './databases.js'
import type { ServerProcess } from './processes.js'

/** A strong key for PETSTORE_API_KEYS: 44 characters, 192 random bits. */
export function strongApiKey (): string {
  return `reliability-${randomBytes(24).toString('base64url')}`
}

/**
 * The environment of a server under load: a fixed key, no per-key rate limit, and logging at
 * debug, whose "incoming request" line tells a test that a request has reached the server.
 */
export function loadEnv (databaseUrl: string, apiKey: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: apiKey, RATE_LIMIT_MAX: '0', LOG_LEVEL: 'debug' }
}

export function bearer (apiKey: string): { authorization: string } {
  return { authorization: `Bearer ${apiKey}` }
}

export async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Every pet a live server lists, read by following its `Link: <…>; rel="next"` headers
 * (absolute URLs, used as given) from `GET /v1/pets?limit=100`. Fails on a page that is not 200.
 */
export async function listAllPetsOver (baseUrl: string, apiKey: string): Promise<Pet[]> {
  const pets: Pet[] = []
  let url: string | undefined = `${baseUrl}/v1/pets?limit=100`
  for (let page = 1; url !== undefined; page++) {
    assert.ok(page <= 10_000, 'the next links never end')
    const res: Response = await fetch(url, { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    assert.equal(res.status, 200, `page ${page} (${url}): ${text}`)
    const items = JSON.parse(text) as Pet[]
    assert.ok(items.length <= 100, `page ${page} holds ${items.length} pets, more than limit=100`)
    pets.push(...items)
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1]
  }
  return pets
}

/** Every event a live server's feed holds, following `next` from the start until a page comes back empty. */
export async function allEventsOver (baseUrl: string, apiKey: string): Promise<Event[]> {
  const events: Event[] = []
  let url = `${baseUrl}/v1/events?limit=100`
  for (;;) {
    const res = await fetch(url, { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    assert.equal(res.status, 200, `${url}: ${text}`)
    const page = JSON.parse(text) as Event[]
    if (page.length === 0) return events
    events.push(...page)
    url = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1] ?? assert.fail('a feed page without a next link')
  }
}

/** The error code (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET, …) or message of a failed fetch, for reports. */
export function describeFetchError (error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code
    if (typeof code === 'string') return code
    if (current.cause === undefined) return current.name === 'TypeError' ? current.message : `${current.name}: ${current.message}`
    current = current.cause
  }
  return String(current)
}

/** Runs `work` on every item with at most `concurrency` at once; results in input order. */
export async function mapConcurrently<T, R> (items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}

/**
 * A value for `idempotency_keys.locked_until` that lies in the past: SQLite stores milliseconds,
 * PostgreSQL a timestamptz.
 */
export function pastLockTime (kind: StoreKind, msAgo = 1_000): number | Date {
  const at = Date.now() - msAgo
  return kind === 'sqlite' ? at : new Date(at)
}

/** The head of a raw `POST /v1/pets` with a JSON body of `contentLength` bytes. */
export function postPetHead (server: ServerProcess, apiKey: string, contentLength: number): string {
  return `POST /v1/pets HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: Bearer ${apiKey}\r\n` +
    `content-type: application/json\r\ncontent-length: ${contentLength}\r\n\r\n`
}

/** A raw `GET path` with the key, kept alive (HTTP/1.1's default). */
export function getRequest (server: ServerProcess, apiKey: string, path: string): string {
  return `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: Bearer ${apiKey}\r\n\r\n`
}

/** How many `POST /v1/pets` requests the server has logged as arrived (headers read, body maybe not; needs LOG_LEVEL=debug). */
export function arrivedCreates (server: ServerProcess): number {
  return server.stdout.split('\n')
    .filter((line) => line.includes('"incoming request"') && line.includes('"method":"POST"') && line.includes('"url":"/v1/pets"'))
    .length
}

/** Waits (at most 10 s) until the server has logged `count` creates as arrived. */
export async function waitForArrivedCreates (server: ServerProcess, count: number): Promise<void> {
  const deadline = Date.now() + 10_000
  while (arrivedCreates(server) < count) {
    assert.ok(Date.now() < deadline, `only ${arrivedCreates(server)} of ${count} creates arrived; stdout:\n${server.stdout}`)
    assert.ok(server.running, `server exited; stderr:\n${server.stderr}`)
    await sleep(10)
  }
}
