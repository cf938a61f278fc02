import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { before, describe, test, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { buildTestApp, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { execSql } from '../helpers/databases.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'
import { generateApiKey } from '../../src/capabilities/keys/api-keys.js'
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/capabilities/rate-limits/redis.js'

// the Redis these suites need (docs/testing.md, "Redis"): the machine's own, as CI's has it
const REDIS = { host: '127.0.0.1', port: 6379 }
const REDIS_URL = `redis://${REDIS.host}:${REDIS.port}`
// nothing listens on port 1: connections are refused at once
const REFUSED_REDIS_URL = 'redis://127.0.0.1:1'

// one key for every instance of a test, as a deployment would configure it in PETSTORE_API_KEYS
const SHARED_KEY = generateApiKey()
const SHARED_AUTH = { authorization: `Bearer ${SHARED_KEY}` }
const UNKNOWN_KEY = { authorization: 'Bearer petstore_not-a-real-key' }

/** A direct Redis connection for the test's own look-ups; closed when the test ends. */
async function redisClient (t: TestContext): Promise<Redis> {
  const redis = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  t.after(() => { redis.disconnect() })
  return redis
}

/** The prefix every counter of the deployment on `databaseUrl` lives under: its id, read from the store's settings, not through the app. */
async function counterPrefix (databaseUrl: string): Promise<string> {
  const rows = await execSql(databaseUrl, "SELECT value FROM settings WHERE name = 'deployment_id'")
  assert.equal(rows.length, 1, 'the first instance stores the deployment id')
  const deploymentId = String(rows[0]?.value)
  assert.match(deploymentId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  return `petstore:${deploymentId}:rate-limit:`
}

async function keysUnder (redis: Redis, prefix: string): Promise<string[]> {
  return redis.keys(`${prefix}*`)
}

/** Deletes the deployment's counters when the test ends (they would expire anyway). */
function cleanUpCounters (t: TestContext, prefix: string): void {
  t.after(async () => {
    const redis = new Redis({ ...REDIS, maxRetriesPerRequest: 1 })
    try {
      const keys = await keysUnder(redis, prefix)
      if (keys.length > 0) await redis.del(...keys)
    } finally {
      redis.disconnect()
    }
  })
}

/** Two instances of one deployment: the same database (hence deployment id) and the same key. */
async function twoInstances (t: TestContext, store: StoreKind, env: Record<string, string>): Promise<[TestApp, TestApp]> {
  const fullEnv = { PETSTORE_API_KEYS: SHARED_KEY, ...env }
  const first = await buildTestApp(t, { store, env: fullEnv, withKey: false })
  const second = await buildTestApp(t, { env: fullEnv, withKey: false, databaseUrl: first.databaseUrl })
  cleanUpCounters(t, await counterPrefix(first.databaseUrl))
  return [first, second]
}

async function listPets (app: FastifyInstance, headers: Record<string, string>, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: '/v1/pets', headers, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
}

function remainingOf (res: LightMyRequestResponse): number | undefined {
  const match = /;r=(\d+);/.exec(String(res.headers.ratelimit ?? ''))
  return match?.[1] === undefined ? undefined : Number(match[1])
}

async function metricValue (app: FastifyInstance, name: string): Promise<number> {
  const line = (await app.metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `))
  assert.ok(line !== undefined, `metric ${name} not found`)
  return Number(line.slice(name.length + 1))
}

function warnings (lines: readonly string[]): Array<{ msg: string, err?: { message?: string } }> {
  return lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40)
}

/** Fails every suite of the file at once, naming the address, when no Redis answers there. */
async function assertRedisAnswers (): Promise<void> {
  const redis = new Redis({ ...REDIS, lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  // the socket's own error (ECONNREFUSED …): connect() rejects only with "Connection is closed."
  let socketError: unknown
  redis.on('error', (error) => { socketError = error })
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    const cause = socketError ?? error
    throw new Error(`no Redis answers at ${REDIS.host}:${REDIS.port} (${cause instanceof Error ? cause.message : String(cause)}): ` +
      `these suites need one there, the REDIS_URL=${REDIS_URL} their apps are given; start a Redis server (docs/testing.md, "Redis")`)
  } finally {
    redis.disconnect()
  }
}

before(assertRedisAnswers)

// the deployment id that keeps deployments' counters apart is a setting in the store: on each store
for (const store of testStores()) {
  describe(`rate limits shared in Redis (${store})`, () => {
    test('When two instances of one deployment share Redis, then requests on both count against one quota', async (t) => {
      const [a, b] = await twoInstances(t, store, { REDIS_URL, RATE_LIMIT_MAX: '4' })
      const apps = [a.app, b.app, a.app, b.app, a.app]

      const answers = []
      for (const app of apps) answers.push(await listPets(app, SHARED_AUTH))

      assert.deepEqual(answers.map((res) => res.statusCode), [200, 200, 200, 200, 429])
      assert.deepEqual(answers.slice(0, 4).map(remainingOf), [3, 2, 1, 0])
      assertError(answers[4] as LightMyRequestResponse, 'rate_limited')
      assert.match(String(answers[4]?.headers['retry-after']), /^[1-9]\d*$/)
      assert.ok(Number(answers[4]?.headers['retry-after']) <= 60)
      // the other instance refuses as well, without having counted the earlier requests itself
      assertError(await listPets(b.app, SHARED_AUTH), 'rate_limited')
    })

    test('When two instances do not use Redis, then each counts on its own', async (t) => {
      const [a, b] = await twoInstances(t, store, { RATE_LIMIT_MAX: '4' })

      const answers = []
      for (let i = 0; i < 4; i++) {
        answers.push(await listPets(a.app, SHARED_AUTH))
        answers.push(await listPets(b.app, SHARED_AUTH))
      }

      assert.deepEqual(answers.map((res) => res.statusCode), [200, 200, 200, 200, 200, 200, 200, 200])
      assert.deepEqual(answers.map(remainingOf), [3, 3, 2, 2, 1, 1, 0, 0])
      assertError(await listPets(a.app, SHARED_AUTH), 'rate_limited')
      assertError(await listPets(b.app, SHARED_AUTH), 'rate_limited')
    })

    test('When counters are written, then they live under the deployment id and never hold the key', async (t) => {
      const [a] = await twoInstances(t, store, { REDIS_URL, RATE_LIMIT_MAX: '4' })
      const redis = await redisClient(t)
      const prefix = await counterPrefix(a.databaseUrl)
      assert.match(prefix, /^petstore:[0-9a-f-]{36}:rate-limit:$/)

      assert.equal((await listPets(a.app, SHARED_AUTH)).statusCode, 200)
      assertError(await listPets(a.app, UNKNOWN_KEY, '10.3.3.3'), 'unauthorized')

      const keys = await keysUnder(redis, prefix)
      assert.equal(keys.length, 2, `expected one per-key and one failed-auth counter, got ${keys.join(', ')}`)
      for (const key of keys) {
        assert.ok(!key.includes(SHARED_KEY), `counter ${key} holds the API key`)
        const ttl = await redis.pttl(key)
        assert.ok(ttl > 0 && ttl <= 60_000, `counter ${key} should expire within the window, PTTL ${ttl}`)
        assert.equal(await redis.get(key), '1')
      }
    })

    test('When two deployments share one Redis, then their counters are separate', async (t) => {
      const env = { PETSTORE_API_KEYS: SHARED_KEY, REDIS_URL, RATE_LIMIT_MAX: '2' }
      const staging = await buildTestApp(t, { store, env, withKey: false })
      const production = await buildTestApp(t, { store, env, withKey: false })
      const stagingPrefix = await counterPrefix(staging.databaseUrl)
      const productionPrefix = await counterPrefix(production.databaseUrl)
      cleanUpCounters(t, stagingPrefix)
      cleanUpCounters(t, productionPrefix)
      assert.notEqual(stagingPrefix, productionPrefix)

      for (let i = 0; i < 2; i++) assert.equal((await listPets(staging.app, SHARED_AUTH)).statusCode, 200)
      assertError(await listPets(staging.app, SHARED_AUTH), 'rate_limited')

      const res = await listPets(production.app, SHARED_AUTH)

      assert.equal(res.statusCode, 200)
      assert.equal(remainingOf(res), 1)
    })

    test('When failed authentications from one address reach both instances, then they share one count', async (t) => {
      const [a, b] = await twoInstances(t, store, { REDIS_URL, AUTH_FAILURE_LIMIT: '3' })

      const first = await listPets(a.app, UNKNOWN_KEY, '10.4.4.4')
      const second = await listPets(b.app, UNKNOWN_KEY, '10.4.4.4')
      const third = await listPets(a.app, UNKNOWN_KEY, '10.4.4.4')

      assert.deepEqual([first, second, third].map(remainingOf), [2, 1, 0])
      assert.equal(second.headers['ratelimit-policy'], '"failed-auth";q=3;w=60')
      assertError(await listPets(b.app, UNKNOWN_KEY, '10.4.4.4'), 'rate_limited')
      assertError(await listPets(b.app, UNKNOWN_KEY, '10.4.4.5'), 'unauthorized')
      assert.equal((await listPets(a.app, SHARED_AUTH, '10.4.4.4')).statusCode, 200)
    })

    test('When an address used up its failures on one instance, then another instance refuses its failing keys too and serves its valid key', async (t) => {
      const [a, b] = await twoInstances(t, store, { REDIS_URL, AUTH_FAILURE_LIMIT: '3' })
      for (let i = 0; i < 3; i++) assert.equal((await listPets(a.app, UNKNOWN_KEY, '10.5.5.5')).statusCode, 401)

      // instance b never saw this address fail
      const wrong = await listPets(b.app, UNKNOWN_KEY, '10.5.5.5')
      const right = await listPets(b.app, SHARED_AUTH, '10.5.5.5')

      assertError(wrong, 'rate_limited')
      assert.equal(wrong.headers['ratelimit-policy'], '"failed-auth";q=3;w=60')
      assert.equal(right.statusCode, 200)
    })
  })
}

describe('rate limits when Redis fails (fail open)', () => {
  test('When Redis refuses the password in REDIS_URL, then requests are served and no log line holds the password', async (t) => {
    const lines: string[] = []
    const { app } = await buildTestApp(t, {
      env: { PETSTORE_API_KEYS: SHARED_KEY, REDIS_URL: 'redis://someone:S3cretPassw0rd@127.0.0.1:6379' },
      withKey: false,
      logStream: { write: (line) => { lines.push(line) } }
    })

    for (let i = 0; i < 3; i++) assert.equal((await listPets(app, SHARED_AUTH)).statusCode, 200)

    assert.ok(warnings(lines).length > 0, 'the failure is logged')
    assert.ok(lines.every((line) => !line.includes('S3cretPassw0rd')), 'no line holds the password')
  })

  test('When Redis refuses connections, then the app starts without waiting for it and serves requests without limits', async (t) => {
    const lines: string[] = []
    const started = Date.now()
    const { app } = await buildTestApp(t, {
      env: { PETSTORE_API_KEYS: SHARED_KEY, REDIS_URL: REFUSED_REDIS_URL, RATE_LIMIT_MAX: '1', AUTH_FAILURE_LIMIT: '1' },
      withKey: false,
      logStream: { write: (line) => { lines.push(line) } }
    })
    // the behaviour: start-up is not held up by a Redis that cannot be reached (it waits at most 1 s for a first
    // connection, then goes on); 10 s is room for a loaded machine. How quickly a server starts with Redis
    // refused is measured by the benchmark (TIMING_TARGETS in bench/report.ts)
    assert.ok(Date.now() - started < 10_000, `start-up took ${Date.now() - started} ms`)

    for (let i = 0; i < 3; i++) {
      const res = await listPets(app, SHARED_AUTH)
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers.ratelimit, undefined)
      assert.equal(res.headers['ratelimit-policy'], undefined)
    }
    // failed authentications are not counted either: 401, never 429
    for (let i = 0; i < 3; i++) {
      const res = await listPets(app, UNKNOWN_KEY, '10.5.5.5')
      assertError(res, 'unauthorized')
      assert.equal(res.headers.ratelimit, undefined)
    }

    assert.ok(await metricValue(app, 'petstore_rate_limit_store_errors_total') >= 6)
    const warned = warnings(lines)
    assert.ok(warned.some((entry) => /redis/i.test(entry.msg) && /fail open/.test(entry.msg)), `no warning about Redis in ${JSON.stringify(warned)}`)
    assert.ok(warned.some((entry) => /rate-limit check skipped/.test(entry.msg)), `no warning about a skipped check in ${JSON.stringify(warned)}`)
    // an outage is logged, not every failed check
    assert.ok(warned.length <= 3, `${warned.length} warnings for one outage`)
  })

  test('When Redis stops answering and comes back, then requests are served promptly meanwhile and limited again after', async (t) => {
    const proxy = await startTcpProxy(t, REDIS)
    const { app, auth, databaseUrl } = await buildTestApp(t, { env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_MAX: '1000' } })
    cleanUpCounters(t, await counterPrefix(databaseUrl))
    const before = await listPets(app, auth)
    assert.equal(before.statusCode, 200)
    assert.equal(remainingOf(before), 999)

    proxy.cut('blackhole')
    for (let i = 0; i < 3; i++) {
      const started = Date.now()
      const res = await listPets(app, auth)
      const elapsed = Date.now() - started
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers.ratelimit, undefined)
      // the bound is the behaviour: the rate-limit check gives up after REDIS_COMMAND_TIMEOUT_MS (200 ms) instead of
      // waiting for Redis (which, blackholed, would hold the request until the proxy heals); the 2 s on top are
      // room for a loaded machine
      assert.ok(elapsed < REDIS_COMMAND_TIMEOUT_MS + 2_000, `a request took ${elapsed} ms while Redis did not answer`)
    }
    assert.ok(await metricValue(app, 'petstore_rate_limit_store_errors_total') >= 3)

    proxy.heal()
    let after: LightMyRequestResponse | undefined
    const deadline = Date.now() + 5000
    while (Date.now() < deadline) {
      after = await listPets(app, auth)
      if (after.headers.ratelimit !== undefined) break
      await sleep(100)
    }

    assert.equal(after?.statusCode, 200)
    assert.ok(after?.headers.ratelimit !== undefined, 'rate-limit fields did not come back within 5 s of Redis healing')
    assert.equal(after.headers['ratelimit-policy'], '"per-key";q=1000;w=60')
    // the count kept in Redis before the outage is still there
    assert.ok((remainingOf(after) ?? 1000) < 999)
  })
})
