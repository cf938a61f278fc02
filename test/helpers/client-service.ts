import assert from 'node:assert/strict'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { createClient, PetStoreError, type ClientOptions, type PetStoreClient, type PetStoreEvent } from '@petstore/client'
import { buildTestApp, type TestApp, type TestAppOptions } from './build-app.js'
import { PROJECT_ROOT } from './processes.js'

const CLIENT_ROOT = join(PROJECT_ROOT, 'clients', 'typescript')

/**
 * Fails when `@petstore/client`'s build is older than its source, so the tests never run
 * yesterday's client: `npm run build:client` rebuilds it (npm ci, npm test and npm run typecheck do).
 */
export function assertClientBuildIsFresh (): void {
  const built = statSync(join(CLIENT_ROOT, 'dist', 'index.js')).mtimeMs
  const sources = readdirSync(join(CLIENT_ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))
  const stale = sources.filter((name) => statSync(join(CLIENT_ROOT, 'src', name)).mtimeMs > built)
  assert.deepEqual(stale, [], 'clients/typescript/dist is older than these sources: run `npm run build:client`')
}

/** One answer as the service saw it. */
export interface ServedRequest {
  method: string
  url: string
  /** The Idempotency-Key it came with. */
  idempotencyKey: string | undefined
  /** The X-Request-Id of the answer. */
  requestId: string
  status: number
  retryAfter: string | undefined
  replayed: boolean
  /** performance.now() when the request arrived and when its answer was sent. */
  arrivedAt: number
  answeredAt: number
}

/** The real app, listening on a real socket, with a record of every request it answered. */
export interface LiveService extends TestApp {
  /** `http://127.0.0.1:<port>` */
  origin: string
  port: number
  /** `<origin>/v1`, what a client takes as `baseUrl`. */
  baseUrl: string
  served: ServedRequest[]
}

/**
 * Builds the app on a fresh store ({@link buildTestApp}), lets `prepare` add hooks, and listens
 * on 127.0.0.1 at a port the OS picks; closed when the test ends.
 */
export async function startService (t: TestContext, options: TestAppOptions = {}, prepare?: (app: FastifyInstance) => void): Promise<LiveService> {
  assertClientBuildIsFresh()
  const test = await buildTestApp(t, options)
  const served: ServedRequest[] = []
  const arrivals = new WeakMap<object, number>()
  test.app.addHook('onRequest', async (request) => { arrivals.set(request, performance.now()) })
  test.app.addHook('onResponse', async (request, reply) => {
    const header = (name: string): string | undefined => {
      const value = reply.getHeader(name)
      return value === undefined ? undefined : String(value)
    }
    served.push({
      method: request.method,
      url: request.url,
      idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      requestId: String(header('x-request-id')),
      status: reply.statusCode,
      retryAfter: header('retry-after'),
      replayed: header('idempotent-replayed') === 'true',
      arrivedAt: arrivals.get(request) ?? Number.NaN,
      answeredAt: performance.now()
    })
  })
  prepare?.(test.app)
  await test.app.listen({ port: 0, host: '127.0.0.1' })
  const address = test.app.server.address()
  assert.ok(address !== null && typeof address === 'object')
  const origin = `http://127.0.0.1:${address.port}`
  return { ...test, origin, port: address.port, baseUrl: `${origin}/v1`, served }
}

/** A client of `service` with its key, its warnings silenced. */
export function clientOf (service: LiveService, options: Partial<ClientOptions> = {}): PetStoreClient {
  return createClient({ baseUrl: service.baseUrl, apiKey: service.key, onWarning: () => {}, ...options })
}

/** Runs `call`, which must fail, and returns its PetStoreError. */
export async function petStoreError (call: () => Promise<unknown>): Promise<PetStoreError> {
  try {
    await call()
  } catch (error) {
    assert.ok(error instanceof PetStoreError, `expected a PetStoreError, got ${String(error)}`)
    return error
  }
  assert.fail('the call succeeded')
}

/** Follows the feed in the background, collecting what it yields; `done` settles when the iteration ends (at the latest when the test does). */
export function startFollowing (t: TestContext, client: PetStoreClient, options: Omit<Parameters<PetStoreClient['events']['follow']>[0], 'signal'> = {}): {
  seen: PetStoreEvent[]
  controller: AbortController
  done: Promise<void>
} {
  const controller = new AbortController()
  const seen: PetStoreEvent[] = []
  const done = (async () => {
    for await (const event of client.events.follow({ ...options, signal: controller.signal })) seen.push(event)
  })()
  // a test that failed before aborting must not leave the follower asking a closed service
  done.catch(() => {})
  t.after(() => { controller.abort() })
  return { seen, controller, done }
}
