import type { TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import type { Clock } from '../../src/infra/runtime/clock.js'
import assert from 'node:assert/strict'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { loadConfig, type Config } from '../../src/infra/config/config.js'
import type { LogStream } from '../../src/infra/logging/logging.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { closeBeforeDrop, freshDatabaseUrl, holdPetLocked, type StoreKind } from './databases.js'

export { testStores, type StoreKind } from './databases.js'
export { tempDir } from './temp-dir.js'

export interface TestAppOptions {
  /** Environment variables besides DATABASE_URL and LOG_LEVEL. */
  env?: Record<string, string>
  clock?: Clock
  /** The engine of a fresh store (default sqlite); ignored with `databaseUrl`. */
  store?: StoreKind
  /** Reuse a store (to test restarts, or several instances on one database); a fresh one by default. */
  databaseUrl?: string
  /** Create an API key in the store (default true). */
  withKey?: boolean
  /** Receives the app's log lines (then LOG_LEVEL defaults to trace instead of silent). */
  logStream?: LogStream
}

export interface TestApp {
  app: FastifyInstance
  config: Config
  /** The DATABASE_URL the app runs on. */
  databaseUrl: string
  /** A valid key in the store ('' when withKey is false). */
  key: string
  /** `{ authorization: 'Bearer <key>' }`, ready to spread into inject headers. */
  auth: { authorization: string }
}

/** Builds the real app on its own store (a SQLite file or a PostgreSQL schema); closed when the test ends. */
export async function buildTestApp (t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? await freshDatabaseUrl(t, options.store ?? 'sqlite')
  // shedding off unless a test turns it on: this process's event loop also runs the test's own work
  // (other apps built, schemas compiled), whose delay would be taken for the app's load
  const config = loadConfig({ LOG_LEVEL: options.logStream === undefined ? 'silent' : 'trace', OVERLOAD_SHEDDING: 'false', ...options.env, DATABASE_URL: databaseUrl })
  const app = await buildApp({
    config,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.logStream === undefined ? {} : { logStream: options.logStream })
  })
  // closed once, by whichever comes first: the test's end, or the drop of the store it runs on
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => { closing ??= app.close(); await closing }
  closeBeforeDrop(databaseUrl, close)
  t.after(close)
  let key = ''
  if (options.withKey ?? true) {
    key = generateApiKey()
    await app.keyStore.createApiKey('test', hashApiKey(key))
  }
  return { app, config, databaseUrl, key, auth: { authorization: `Bearer ${key}` } }
}

/** POSTs `body`, serialized as JSON whatever its type, to /v1/pets. */
export async function postPet (test: TestApp, body: unknown): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...test.auth, 'content-type': 'application/json' },
    payload: JSON.stringify(body)
  })
}

/** POSTs `body` and returns the pet of the 201 (fails on any other answer). */
export async function createdPet (test: TestApp, body: Record<string, unknown>): Promise<Pet> {
  const res = await postPet(test, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** PATCHes `body`, serialized as JSON whatever its type, to /v1/pets/{petId} as a JSON Merge Patch. */
export async function patchPet (test: TestApp, petId: number | string, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'PATCH',
    url: `/v1/pets/${petId}`,
    headers: { ...test.auth, 'content-type': 'application/merge-patch+json', ...headers },
    payload: JSON.stringify(body)
  })
}

/**
 * PATCHes `body` while another writer holds the pet's row for longer than the store waits (build the app with a
 * short DATABASE_TIMEOUT_MS): how a test gets the store's own failure, a 503.
 */
export async function patchPetWhileLocked (test: TestApp, petId: number, body: unknown): Promise<LightMyRequestResponse> {
  const release = await holdPetLocked(test.databaseUrl, petId)
  try {
    return await patchPet(test, petId, body)
  } finally {
    await release()
  }
}

/** GET /v1/pets/{petId} with the key. */
export async function getPet (test: TestApp, petId: number, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return test.app.inject({ method: 'GET', url: `/v1/pets/${petId}`, headers: { ...test.auth, ...headers } })
}

/** Every pet in the store, read by following the `next` links from the first page. */
export async function listAllPets (test: TestApp): Promise<Array<Record<string, unknown>>> {
  const pets = []
  let url: string | undefined = '/v1/pets?limit=100'
  while (url !== undefined) {
    const res: LightMyRequestResponse = await test.app.inject({ method: 'GET', url, headers: test.auth })
    pets.push(...res.json())
    const next: string | undefined = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
    url = next === undefined ? undefined : new URL(next).pathname + new URL(next).search
  }
  return pets
}
