import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { readAllCells } from '../helpers/databases.js'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'

// the documented public set: probes, the API description, the events' (AsyncAPI) and the reference page (/docs), nothing else;
// each route with the URLs that show it answers and the status each answers with (the page's routes are
// two, /docs and /docs/*, which answer for every part of the page: src/docs/api-reference.ts)
const PUBLIC_ROUTES = new Map([
  ['/healthz', [{ url: '/healthz', status: 200 }]],
  ['/readyz', [{ url: '/readyz', status: 200 }]],
  ['/v1/openapi.json', [{ url: '/v1/openapi.json', status: 200 }]],
  ['/v1/openapi.yaml', [{ url: '/v1/openapi.yaml', status: 200 }]],
  ['/v1/asyncapi.json', [{ url: '/v1/asyncapi.json', status: 200 }]],
  ['/v1/asyncapi.yaml', [{ url: '/v1/asyncapi.yaml', status: 200 }]],
  ['/docs', [{ url: '/docs', status: 200 }]],
  ['/docs/*', [
    { url: '/docs/', status: 200 },
    { url: '/docs/json', status: 200 },
    { url: '/docs/yaml', status: 200 },
    { url: '/docs/static/index.html', status: 302 },
    { url: '/docs/static/swagger-initializer.js', status: 200 },
    { url: '/docs/static/theme/petstore-plugin.js', status: 200 },
    { url: '/docs/static/swagger-ui-bundle.js', status: 200 }
  ]]
])

/** A concrete URL for a route pattern: parameters become 1, a wildcard some path. */
function concreteUrl (pattern: string): string {
  return pattern.replace(/:[A-Za-z]+/g, '1').replace(/\*$/, 'anything')
}

for (const store of testStores()) {
  describe(`security: every route is behind the key (OWASP API2, API5) (${store})`, () => {
    test('When each route the app registers is called without a key, then all but the documented public ones answer 401', async (t) => {
      const { app } = await buildTestApp(t, { store, env: { CORS_ORIGINS: 'https://app.example.com' } })
      const routes = app.registeredRoutes.filter((route) => !PUBLIC_ROUTES.has(route.url))

      // the walk covers every operation and every 405 stand-in, not just a hand-picked list
      assert.ok(routes.length >= 20, `only ${routes.length} routes found`)
      for (const route of routes) {
        const url = concreteUrl(route.url)
        // a wildcard OPTIONS route (CORS preflight) only answers preflights from listed origins
        const res = await app.inject({ method: route.method as 'GET', url, headers: { 'content-type': 'application/json' }, payload: route.method === 'GET' || route.method === 'HEAD' ? undefined : '{}' })
        if (route.url === '*' || route.url === '/*') {
          assert.ok(res.statusCode === 401 || res.statusCode === 404, `${route.method} ${url}: ${res.statusCode}`)
          continue
        }
        if (route.method === 'HEAD') {
          assert.equal(res.statusCode, 401, `${route.method} ${url}`)
          continue
        }
        assertError(res, 'unauthorized')
      }
    })

    test('When each route the app registers is called with a key the store does not hold, or one it revoked, then all but the documented public ones answer 401', async (t) => {
      // every failure is counted against the address: a limit this high never turns one into a 429
      const api = await buildTestApp(t, { store, env: { CORS_ORIGINS: 'https://app.example.com', AUTH_FAILURE_LIMIT: '1000000', API_KEY_CACHE_SECONDS: '0' } })
      const revokedKey = generateApiKey()
      const revoked = await api.app.keyStore.createApiKey('revoked', hashApiKey(revokedKey))
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${revokedKey}` } })).statusCode, 200)
      assert.equal(await api.app.keyStore.revokeApiKey(revoked.id), true)
      const routes = api.app.registeredRoutes.filter((route) => !PUBLIC_ROUTES.has(route.url))

      assert.ok(routes.length >= 20, `only ${routes.length} routes found`)
      for (const key of [generateApiKey(), revokedKey]) {
        for (const route of routes) {
          const url = concreteUrl(route.url)
          const res = await api.app.inject({
            method: route.method as 'GET',
            url,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            payload: route.method === 'GET' || route.method === 'HEAD' ? undefined : '{}'
          })
          const what = `${route.method} ${url} with ${key === revokedKey ? 'a revoked' : 'an unknown'} key`
          if (route.url === '*' || route.url === '/*') {
            assert.ok(res.statusCode === 401 || res.statusCode === 404, `${what}: ${res.statusCode}`)
            continue
          }
          assert.equal(res.statusCode, 401, what)
          assert.equal(res.headers['www-authenticate'], 'Bearer realm="petstore", error="invalid_token"', what)
          if (route.method !== 'HEAD') assertError(res, 'unauthorized')
        }
      }
      t.diagnostic(`${store}: ${api.app.registeredRoutes.length} routes, ${routes.length} outside the public set, each called with an unknown and a revoked key`)
    })

    test('When the public routes are called without a key, then only they answer, and they reveal no pet', async (t) => {
      const { app, auth } = await buildTestApp(t, { store })
      // values no document or example holds: the document's examples show pets too, but never a stored one
      const secret = { name: `Secret-${randomUUID()}`, categoryId: 7_340_271_904_231 }
      assert.equal((await app.inject({ method: 'POST', url: '/v1/pets', headers: auth, payload: secret })).statusCode, 201)
      for (const { url, status } of [...PUBLIC_ROUTES.values()].flat()) {
        const res = await app.inject({ method: 'GET', url })
        assert.equal(res.statusCode, status, url)
        assert.ok(!res.body.includes(secret.name) && !res.body.includes(String(secret.categoryId)), `${url} shows the stored pet`)
      }
    })

    test('When a create body carries server-owned or unknown fields, then nothing is created (OWASP API3 mass assignment)', async (t) => {
      const api = await buildTestApp(t, { store })
      for (const body of [
        { id: 99, name: 'Rex', categoryId: 1 },
        { name: 'Rex', categoryId: 1, owner: 'me' },
        JSON.parse('{"name":"Rex","categoryId":1,"__proto__":{"id":7}}'),
        { name: 'Rex', categoryId: 1, constructor: { prototype: { id: 7 } } }
      ]) {
        const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
        assertError(res, 'invalid_request')
      }
      const list = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })
      assert.deepEqual(list.json(), [])
    })

    test('When keys have been created and used, then the database holds only their hashes (OWASP API2)', async (t) => {
      const api = await buildTestApp(t, { store })
      assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)

      const cells = await readAllCells(api.databaseUrl)
      assert.ok(cells.some((cell) => cell.table === 'api_keys' && cell.column === 'key_hash'))
      const secret = api.key.slice('petstore_'.length)
      for (const cell of cells) assert.ok(!cell.value.includes(secret), `${cell.table}.${cell.column} holds the key`)
    })
  })
}
