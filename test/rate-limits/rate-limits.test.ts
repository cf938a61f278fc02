import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildTestApp, postPet, testStores } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { mockDate } from '../helpers/clock.js'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'

const UNKNOWN_KEY = { authorization: 'Bearer petstore_not-a-real-key' }

/** Asserts both IETF RateLimit fields of `policy`, with `remaining` left; returns the seconds to reset. */
function assertRateLimitFields (res: LightMyRequestResponse, policy: string, quota: number, windowSeconds: number, remaining: number): number {
  assert.equal(res.headers['ratelimit-policy'], `"${policy}";q=${quota};w=${windowSeconds}`)
  const match = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(String(res.headers.ratelimit))
  assert.ok(match !== null, `unexpected RateLimit field: ${String(res.headers.ratelimit)}`)
  assert.equal(Number(match[1]), remaining)
  const reset = Number(match[2])
  assert.ok(reset >= 1 && reset <= windowSeconds, `t=${reset} should be within 1..${windowSeconds}`)
  return reset
}

function assertNoRateLimitFields (res: LightMyRequestResponse): void {
  assert.equal(res.headers['ratelimit-policy'], undefined)
  assert.equal(res.headers.ratelimit, undefined)
}

/** Asserts a 429 `rate_limited` with a Retry-After of 1..`windowSeconds` seconds; returns it. */
function assertRateLimited (res: LightMyRequestResponse, windowSeconds: number): number {
  assertError(res, 'rate_limited')
  const retryAfter = String(res.headers['retry-after'])
  assert.match(retryAfter, /^[1-9]\d*$/)
  assert.ok(Number(retryAfter) <= windowSeconds, `Retry-After ${retryAfter} should be at most ${windowSeconds}`)
  return Number(retryAfter)
}

async function listPets (app: FastifyInstance, headers: Record<string, string>, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: '/v1/pets', headers, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
}

async function metricsText (app: FastifyInstance): Promise<string> {
  return app.metrics.registry.metrics()
}

for (const store of testStores()) {
  describe(`per-key rate limit (${store})`, () => {
    const env = { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '60' }

    test('When a key makes requests within its quota, then each carries the policy and what is left', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })

      for (const remaining of [2, 1, 0]) {
        const res = await listPets(app, auth)

        assert.equal(res.statusCode, 200)
        assertRateLimitFields(res, 'per-key', 3, 60, remaining)
      }
    })

    test('When a key goes over its quota, then 429 rate_limited with Retry-After and the fields at r=0', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })
      for (let i = 0; i < 3; i++) assert.equal((await listPets(app, auth)).statusCode, 200)

      const res = await listPets(app, auth)

      const retryAfter = assertRateLimited(res, 60)
      const reset = assertRateLimitFields(res, 'per-key', 3, 60, 0)
      assert.equal(retryAfter, reset)
      assert.ok(res.json().message.includes('per-key'))
    })

    test('When a key keeps calling over its quota, then every further call is refused too', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })
      for (let i = 0; i < 3; i++) await listPets(app, auth)

      for (let i = 0; i < 3; i++) {
        const res = await listPets(app, auth)
        assertRateLimited(res, 60)
        assertRateLimitFields(res, 'per-key', 3, 60, 0)
      }
    })

    test('When one key is over its quota, then another key is not affected', async (t) => {
      const test = await buildTestApp(t, { store, env })
      const otherKey = generateApiKey()
      await test.app.keyStore.createApiKey('other', hashApiKey(otherKey))
      const other = { authorization: `Bearer ${otherKey}` }
      for (let i = 0; i < 3; i++) await listPets(test.app, test.auth)
      assertRateLimited(await listPets(test.app, test.auth), 60)

      const res = await listPets(test.app, other)

      assert.equal(res.statusCode, 200)
      assertRateLimitFields(res, 'per-key', 3, 60, 2)
    })

    test('When a key lists, creates and reads pets, then every operation counts against one quota', async (t) => {
      const test = await buildTestApp(t, { store, env })

      const list = await listPets(test.app, test.auth)
      const created = await postPet(test, { name: 'Rex', categoryId: 1 })
      const read = await test.app.inject({ method: 'GET', url: `/v1/pets/${String(created.json().id)}`, headers: test.auth })
      const over = await postPet(test, { name: 'Fido', categoryId: 1 })

      assert.equal(list.statusCode, 200)
      assertRateLimitFields(list, 'per-key', 3, 60, 2)
      assert.equal(created.statusCode, 201)
      assertRateLimitFields(created, 'per-key', 3, 60, 1)
      assert.equal(read.statusCode, 200)
      assertRateLimitFields(read, 'per-key', 3, 60, 0)
      assertRateLimited(over, 60)
    })

    test('When a create is refused over the quota, then no pet is created', async (t) => {
      const test = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW: '60' } })
      assert.equal((await listPets(test.app, test.auth)).statusCode, 200)

      const over = await postPet(test, { name: 'Rex', categoryId: 1 })

      assertRateLimited(over, 60)
      assert.deepEqual((await test.app.petStore.listPets({ limit: 10 })).pets, [])
    })

    test('When RATE_LIMIT_MAX is 0, then no answer carries rate-limit fields and none is refused', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '0' } })

      for (let i = 0; i < 20; i++) {
        const res = await listPets(app, auth)
        assert.equal(res.statusCode, 200)
        assertNoRateLimitFields(res)
      }
    })

    test('When the window has passed, then a key over its quota may call again', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW: '1' } })
      const first = await listPets(app, auth)
      assert.equal(first.statusCode, 200)
      assertRateLimitFields(first, 'per-key', 1, 1, 0)
      const refused = await listPets(app, auth)
      assert.equal(assertRateLimited(refused, 1), 1)

      await sleep(1100)
      const again = await listPets(app, auth)

      assert.equal(again.statusCode, 200)
      assertRateLimitFields(again, 'per-key', 1, 1, 0)
    })

    test('When a key is refused, then the per-key rejection is counted in the metrics', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '1' } })
      await listPets(app, auth)
      assert.doesNotMatch(await metricsText(app), /petstore_rate_limit_rejections_total\{policy="per-key"\} [1-9]/)

      assertRateLimited(await listPets(app, auth), 60)

      assert.match(await metricsText(app), /^petstore_rate_limit_rejections_total\{policy="per-key"\} 1$/m)
    })
  })

  describe(`public routes and rate limits (${store})`, () => {
    for (const url of ['/healthz', '/readyz', '/v1/openapi.json', '/v1/openapi.yaml', '/v1/asyncapi.json', '/v1/asyncapi.yaml']) {
      test(`When ${url} is called far beyond every limit, then it is never refused and carries no rate-limit fields`, async (t) => {
        const { app } = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '1', AUTH_FAILURE_LIMIT: '1' } })
        // the address is blocked for failed authentications: public routes still answer
        assertError(await listPets(app, UNKNOWN_KEY, '10.2.2.2'), 'unauthorized')
        assertError(await listPets(app, UNKNOWN_KEY, '10.2.2.2'), 'rate_limited')

        for (let i = 0; i < 5; i++) {
          const res = await app.inject({ method: 'GET', url, remoteAddress: '10.2.2.2' })
          assert.equal(res.statusCode, 200, res.body)
          assertNoRateLimitFields(res)
        }
      })
    }
  })

  // only requests whose key fails are counted and, over the limit, refused: a valid key is always served
  describe(`failed-authentication limit per client address (${store})`, () => {
    const env = { AUTH_FAILURE_LIMIT: '3' }

    test('When an address sends unknown keys, then each 401 carries the failed-auth policy and what is left', async (t) => {
      const { app } = await buildTestApp(t, { store, env })

      for (const remaining of [2, 1, 0]) {
        const res = await listPets(app, UNKNOWN_KEY, '10.1.1.1')

        assertError(res, 'unauthorized')
        assertRateLimitFields(res, 'failed-auth', 3, 60, remaining)
      }
    })

    test('When an address has used up its failures, then its failing keys get 429 while a valid key from it is served', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })
      for (let i = 0; i < 3; i++) assertError(await listPets(app, UNKNOWN_KEY, '10.1.1.1'), 'unauthorized')

      const failing = await listPets(app, UNKNOWN_KEY, '10.1.1.1')
      const valid = await listPets(app, auth, '10.1.1.1')

      assertRateLimited(failing, 60)
      assertRateLimitFields(failing, 'failed-auth', 3, 60, 0)
      assert.equal(failing.headers['www-authenticate'], undefined)
      assert.equal(valid.statusCode, 200, valid.body)
      assert.doesNotMatch(String(valid.headers.ratelimit), /failed-auth/)
    })

    test('When an address is over its limit, then a valid key keeps being served and its own per-key limit still applies', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { ...env, RATE_LIMIT_MAX: '2' } })
      for (let i = 0; i < 4; i++) await listPets(app, UNKNOWN_KEY, '10.1.1.1')

      const first = await listPets(app, auth, '10.1.1.1')
      const second = await listPets(app, auth, '10.1.1.1')
      const third = await listPets(app, auth, '10.1.1.1')

      assert.equal(first.statusCode, 200)
      assert.equal(second.statusCode, 200)
      assertRateLimited(third, 60)
      assertRateLimitFields(third, 'per-key', 2, 60, 0)
      assertRateLimited(await listPets(app, UNKNOWN_KEY, '10.1.1.1'), 60)
    })

    test('When an address is over its limit and a request sends no key at all, then it gets 401: it guesses nothing', async (t) => {
      const { app } = await buildTestApp(t, { store, env })
      for (let i = 0; i < 4; i++) await listPets(app, UNKNOWN_KEY, '10.1.1.1')

      const res = await listPets(app, {}, '10.1.1.1')

      assertError(res, 'unauthorized')
      assert.equal(res.headers.ratelimit, undefined)
    })

    test('When requests come with a malformed Authorization header, then they count as failures; without any, they do not', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })

      const missing = []
      for (let i = 0; i < 5; i++) missing.push(await listPets(app, {}, '10.1.1.3'))
      const malformed = []
      for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b']) malformed.push(await listPets(app, { authorization: header }, '10.1.1.3'))
      const blocked = await listPets(app, { authorization: 'Bearer' }, '10.1.1.3')
      const valid = await listPets(app, auth, '10.1.1.3')

      // probes or a misconfigured client without a key must not lock their address out
      for (const res of missing) {
        assertError(res, 'unauthorized')
        assert.equal(res.headers.ratelimit, undefined)
      }
      malformed.forEach((res, index) => {
        assertError(res, 'unauthorized')
        assertRateLimitFields(res, 'failed-auth', 3, 60, 2 - index)
      })
      assertRateLimited(blocked, 60)
      assert.equal(valid.statusCode, 200)
    })

    test('When an address authenticates successfully, then its failure count is not touched', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })
      await listPets(app, UNKNOWN_KEY, '10.1.1.4')
      for (let i = 0; i < 5; i++) {
        const ok = await listPets(app, auth, '10.1.1.4')
        assert.equal(ok.statusCode, 200)
        assert.doesNotMatch(String(ok.headers.ratelimit), /failed-auth/)
      }

      const res = await listPets(app, UNKNOWN_KEY, '10.1.1.4')

      assertRateLimitFields(res, 'failed-auth', 3, 60, 1)
    })

    test('When IPv6 addresses of one /64 fail, then they share one count; another /64 has its own', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })

      const first = await listPets(app, UNKNOWN_KEY, '2001:db8::1')
      const second = await listPets(app, UNKNOWN_KEY, '2001:db8::2')
      const third = await listPets(app, UNKNOWN_KEY, '2001:db8:0:0:abcd::3')
      const sameNetwork = await listPets(app, UNKNOWN_KEY, '2001:db8::ffff')
      const sameNetworkValid = await listPets(app, auth, '2001:db8::ffff')
      const otherNetwork = await listPets(app, auth, '2001:db8:0:1::1')
      const otherNetworkFailure = await listPets(app, UNKNOWN_KEY, '2001:db8:0:1::2')

      assertRateLimitFields(first, 'failed-auth', 3, 60, 2)
      assertRateLimitFields(second, 'failed-auth', 3, 60, 1)
      assertRateLimitFields(third, 'failed-auth', 3, 60, 0)
      assertRateLimited(sameNetwork, 60)
      assert.equal(sameNetworkValid.statusCode, 200)
      assert.equal(otherNetwork.statusCode, 200)
      assertError(otherNetworkFailure, 'unauthorized')
      assertRateLimitFields(otherNetworkFailure, 'failed-auth', 3, 60, 2)
    })

    test('When an address comes as IPv4 and as IPv4-mapped IPv6, then both share one count', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })

      await listPets(app, UNKNOWN_KEY, '10.1.1.5')
      await listPets(app, UNKNOWN_KEY, '::ffff:10.1.1.5')
      await listPets(app, UNKNOWN_KEY, '10.1.1.5')

      assertRateLimited(await listPets(app, UNKNOWN_KEY, '::ffff:10.1.1.5'), 60)
      assertError(await listPets(app, UNKNOWN_KEY, '::ffff:10.1.1.6'), 'unauthorized')
      assert.equal((await listPets(app, auth, '::ffff:10.1.1.5')).statusCode, 200)
    })

    test('When there is no trusted proxy, then a forged X-Forwarded-For does not escape the count', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })

      for (let i = 0; i < 3; i++) {
        await app.inject({ method: 'GET', url: '/v1/pets', headers: { ...UNKNOWN_KEY, 'x-forwarded-for': `198.51.100.${i}` }, remoteAddress: '10.1.1.10' })
      }
      const res = await app.inject({ method: 'GET', url: '/v1/pets', headers: { ...UNKNOWN_KEY, 'x-forwarded-for': '198.51.100.99' }, remoteAddress: '10.1.1.10' })

      assertRateLimited(res, 60)
      assert.equal((await app.inject({ method: 'GET', url: '/v1/pets', headers: auth, remoteAddress: '10.1.1.10' })).statusCode, 200)
    })

    test('When TRUST_PROXY names one hop, then failures are counted per forwarded client, not per proxy', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { ...env, TRUST_PROXY: '1' } })
      const viaProxy = (headers: Record<string, string>, client: string): Promise<LightMyRequestResponse> =>
        app.inject({ method: 'GET', url: '/v1/pets', headers: { ...headers, 'x-forwarded-for': client }, remoteAddress: '10.0.0.1' })

      for (let i = 0; i < 3; i++) assertError(await viaProxy(UNKNOWN_KEY, '198.51.100.7'), 'unauthorized')

      assertRateLimited(await viaProxy(UNKNOWN_KEY, '198.51.100.7'), 60)
      assertError(await viaProxy(UNKNOWN_KEY, '198.51.100.8'), 'unauthorized')
      assert.equal((await viaProxy(auth, '198.51.100.7')).statusCode, 200)
    })

    test('When the failed-auth minute is over, then a blocked address may try again', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env })
      mockDate(t)
      for (let i = 0; i < 3; i++) await listPets(app, UNKNOWN_KEY, '10.1.1.7')
      t.mock.timers.tick(30_000)
      assertRateLimited(await listPets(app, UNKNOWN_KEY, '10.1.1.7'), 30)

      t.mock.timers.tick(31_000)
      const valid = await listPets(app, auth, '10.1.1.7')
      const wrong = await listPets(app, UNKNOWN_KEY, '10.1.1.7')

      assert.equal(valid.statusCode, 200)
      assertError(wrong, 'unauthorized')
      assertRateLimitFields(wrong, 'failed-auth', 3, 60, 2)
    })

    test('When per-key limiting is off, then failed authentications are still limited', async (t) => {
      const { app, auth } = await buildTestApp(t, { store, env: { ...env, RATE_LIMIT_MAX: '0' } })
      for (let i = 0; i < 3; i++) await listPets(app, UNKNOWN_KEY, '10.1.1.8')

      assertRateLimited(await listPets(app, UNKNOWN_KEY, '10.1.1.8'), 60)
      assert.equal((await listPets(app, auth, '10.1.1.8')).statusCode, 200)
    })

    test('When a blocked address is refused, then the failed-auth rejection is counted in the metrics', async (t) => {
      const { app } = await buildTestApp(t, { store, env })
      for (let i = 0; i < 3; i++) await listPets(app, UNKNOWN_KEY, '10.1.1.9')
      // a 401 is not a rejection by a rate limit
      assert.doesNotMatch(await metricsText(app), /petstore_rate_limit_rejections_total\{policy="failed-auth"\} [1-9]/)

      assertRateLimited(await listPets(app, UNKNOWN_KEY, '10.1.1.9'), 60)

      const text = await metricsText(app)
      assert.match(text, /^petstore_rate_limit_rejections_total\{policy="failed-auth"\} 1$/m)
      assert.doesNotMatch(text, /petstore_rate_limit_rejections_total\{policy="per-key"\} [1-9]/)
    })
  })
}
