import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp, type Clock } from '../../src/app.js'
import { generateApiKey, hashApiKey } from '../../src/auth/api-keys.js'
import { loadConfig, type Config } from '../../src/config.js'

/** The stores the suites run against; `TEST_STORES=sqlite` narrows them. */
export type StoreKind = 'sqlite'

export function testStores (): StoreKind[] {
  const all: StoreKind[] = ['sqlite']
  const wanted = process.env.TEST_STORES?.split(',').map((s) => s.trim()).filter((s) => s !== '')
  return wanted === undefined || wanted.length === 0 ? all : all.filter((kind) => wanted.includes(kind))
}

/** A fresh directory, removed when the test ends. */
export async function tempDir (t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'petstore-test-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

export interface TestAppOptions {
  /** Environment variables besides DATABASE_URL and LOG_LEVEL. */
  env?: Record<string, string>
  clock?: Clock
  /** Reuse a database file (to test restarts); a fresh one by default. */
  databasePath?: string
  /** Create an API key in the store (default true). */
  withKey?: boolean
}

export interface TestApp {
  app: FastifyInstance
  config: Config
  databasePath: string
  /** A valid key in the store ('' when withKey is false). */
  key: string
  /** `{ authorization: 'Bearer <key>' }`, ready to spread into inject headers. */
  auth: { authorization: string }
}

/** Builds the real app on its own SQLite file; closed when the test ends. */
export async function buildTestApp (t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  const databasePath = options.databasePath ?? join(await tempDir(t), 'petstore.db')
  const config = loadConfig({ LOG_LEVEL: 'silent', ...options.env, DATABASE_URL: `sqlite:${databasePath}` })
  const app = await buildApp({ config, ...(options.clock === undefined ? {} : { clock: options.clock }) })
  t.after(() => app.close())
  let key = ''
  if (options.withKey ?? true) {
    key = generateApiKey()
    await app.store.createApiKey('test', hashApiKey(key))
  }
  return { app, config, databasePath, key, auth: { authorization: `Bearer ${key}` } }
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
