import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, listAllPets, postPet, testStores } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { hashApiKey } from '../../src/capabilities/keys/api-keys.js'

const PROTECTED: Array<{ method: 'GET' | 'POST' | 'DELETE', url: string, payload?: string }> = [
  { method: 'GET', url: '/v1/pets' },
  { method: 'POST', url: '/v1/pets', payload: '{"name":"Rex","categoryId":1}' },
  { method: 'GET', url: '/v1/pets/1' },
  { method: 'GET', url: '/v1/store/orders' },
  { method: 'DELETE', url: '/v1/pets/1' },
  { method: 'GET', url: '/v1/no-such-route' },
  { method: 'GET', url: `/v1/pets/${'9'.repeat(200)}` }
]

for (const store of testStores()) {
  describe(`bearer authentication (${store})`, () => {
    for (const route of PROTECTED) {
      test(`When ${route.method} ${route.url} has no key, then 401 with WWW-Authenticate`, async (t) => {
        const { app } = await buildTestApp(t, { store })

        const res = await app.inject({ method: route.method, url: route.url, headers: { 'content-type': 'application/json' }, ...(route.payload === undefined ? {} : { payload: route.payload }) })

        assertError(res, 'unauthorized', 'Authorization')
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="petstore"')
      })
    }

    const badHeaders: Array<[string, string, string]> = [
      ['another scheme', 'Basic dXNlcjpwYXNz', 'invalid_request'],
      ['the scheme alone', 'Bearer', 'invalid_request'],
      ['two tokens', 'Bearer abc def', 'invalid_request'],
      ['a token with forbidden characters', 'Bearer abc$def', 'invalid_request'],
      ['an unknown key', 'Bearer petstore_not-a-real-key', 'invalid_token']
    ]
    for (const [problem, header, challengeError] of badHeaders) {
      test(`When the Authorization header has ${problem}, then 401 with error="${challengeError}"`, async (t) => {
        const { app } = await buildTestApp(t, { store })

        const res = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: header } })

        assertError(res, 'unauthorized')
        assert.equal(res.headers['www-authenticate'], `Bearer realm="petstore", error="${challengeError}"`)
      })
    }

    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      test(`When the scheme is written "${scheme}", then the key is accepted`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await app.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `${scheme} ${app.key}` } })

        assert.equal(res.statusCode, 200)
      })
    }

    test('When an invalid body comes without a key, then 401, not 400, and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { 'content-type': 'application/json' }, payload: '{"id":1' })

      assertError(res, 'unauthorized')
      assert.deepEqual(await listAllPets(app), [])
    })

    test('When a pet exists or not, then a request without a key gets the same 401', async (t) => {
      const app = await buildTestApp(t, { store })
      const created = (await postPet(app, { name: 'Rex', categoryId: 1 })).json()

      const existing = await app.app.inject({ method: 'GET', url: `/v1/pets/${created.id}` })
      const missing = await app.app.inject({ method: 'GET', url: '/v1/pets/999' })

      assertError(existing, 'unauthorized')
      assert.equal(existing.body, missing.body)
    })

    test('When a body is too large and comes without a key, then 401, not 413', async (t) => {
      const { app } = await buildTestApp(t, { store })

      const res = await app.inject({ method: 'POST', url: '/v1/pets', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(20_000), categoryId: 1 }) })

      assertError(res, 'unauthorized')
    })

    test('When a key is revoked and look-ups are not cached, then it stops working at once', async (t) => {
      const app = await buildTestApp(t, { store, env: { API_KEY_CACHE_SECONDS: '0' } })
      assert.equal((await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })).statusCode, 200)
      const [record] = await app.app.keyStore.listApiKeys()
      assert.ok(record !== undefined)

      assert.equal(await app.app.keyStore.revokeApiKey(record.id), true)
      const res = await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })

      assertError(res, 'unauthorized', 'revoked')
    })

    test('When look-ups are cached for 5 s, then a revoked key works for at most 5 s after its look-up, then never again', async (t) => {
      let now = Date.parse('2027-01-01T00:00:00Z')
      const app = await buildTestApp(t, { store, clock: { now: () => now }, env: { API_KEY_CACHE_SECONDS: '5' } })
      const list = async (): Promise<number> => (await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })).statusCode
      assert.equal(await list(), 200)
      const [record] = await app.app.keyStore.listApiKeys()
      assert.ok(record !== undefined)

      assert.equal(await app.app.keyStore.revokeApiKey(record.id), true)
      now += 5_000
      const withinCache = await list()
      now += 1
      const afterCache = await list()
      now += 60_000
      const later = await list()

      assert.deepEqual([withinCache, afterCache, later], [200, 401, 401])
    })

    test('When look-ups are cached and 100 requests with one stored key arrive at once, then the store is asked once and each is served', async (t) => {
      const app = await buildTestApp(t, { store, env: { API_KEY_CACHE_SECONDS: '5', RATE_LIMIT_MAX: '0' } })
      const lookUps = async (): Promise<number> => {
        const match = /^petstore_store_query_duration_seconds_count\{method="findActiveApiKeyByHash",outcome="ok"\} (\d+)$/m.exec(await app.app.metrics.registry.metrics())
        return Number(match?.[1] ?? 0)
      }

      const answers = await Promise.all(Array.from({ length: 100 }, async () => await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })))

      assert.deepEqual(answers.map((res) => res.statusCode), answers.map(() => 200))
      assert.equal(await lookUps(), 1, 'each request of the burst asked the store for the key')
    })

    test('When a key is created while look-ups are cached, then it works on its first request', async (t) => {
      const app = await buildTestApp(t, { store, withKey: false, env: { API_KEY_CACHE_SECONDS: '5' } })
      const unknown = await app.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer petstore_not-created-yet' } })
      assertError(unknown, 'unauthorized')
      const key = 'petstore_created-after-a-miss'
      await app.app.keyStore.createApiKey('late', hashApiKey(key))

      const res = await app.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })

      assert.equal(res.statusCode, 200, 'a miss must not be cached')
    })

    test('When keys come from PETSTORE_API_KEYS, then each of them is accepted and others are not', async (t) => {
      const { app } = await buildTestApp(t, { store, withKey: false, env: { PETSTORE_API_KEYS: 'first-env-key-0123456789, second-env-key-0123456789' } })

      for (const key of ['first-env-key-0123456789', 'second-env-key-0123456789']) {
        const res = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
        assert.equal(res.statusCode, 200)
      }
      const other = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer third-env-key-0123456789' } })
      assertError(other, 'unauthorized')
    })

    test('When a stored key is used, then its last use is recorded', async (t) => {
      const app = await buildTestApp(t, { store })
      assert.equal((await app.app.keyStore.listApiKeys())[0]?.lastUsedAt, null)

      await app.app.inject({ method: 'GET', url: '/v1/pets', headers: app.auth })

      // recorded just after the answer, off the request's path
      let lastUsedAt: string | null | undefined = null
      for (let attempt = 0; attempt < 50 && lastUsedAt === null; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        lastUsedAt = (await app.app.keyStore.listApiKeys())[0]?.lastUsedAt
      }
      assert.ok(lastUsedAt !== null && lastUsedAt !== undefined && Date.now() - Date.parse(lastUsedAt) < 60_000)
    })

    test('When the public documents and probes are called without a key, then they answer', async (t) => {
      const { app } = await buildTestApp(t, { store })

      for (const url of ['/healthz', '/readyz', '/v1/openapi.json', '/v1/openapi.yaml', '/v1/asyncapi.json', '/v1/asyncapi.yaml']) {
        const res = await app.inject({ method: 'GET', url })
        assert.equal(res.statusCode, 200, url)
      }
    })
  })
}
