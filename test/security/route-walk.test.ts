import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { buildTestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { readAllCells } from '../helpers/databases.js'

// the documented public set: probes, the API description and its reference page (/docs), nothing else;
// each route with the URLs that show it answers and the status each answers with (the page's routes are
// two, /docs and /docs/*, which answer for every part of the page: src/docs/api-reference.ts)
const PUBLIC_ROUTES = new Map([
  ['/healthz', [{ url: '/healthz', status: 200 }]],
  ['/readyz', [{ url: '/readyz', status: 200 }]],
  ['/v1/openapi.json', [{ url: '/v1/openapi.json', status: 200 }]],
  ['/v1/openapi.yaml', [{ url: '/v1/openapi.yaml', status: 200 }]],
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

describe('security: every route is behind the key (OWASP API2, API5)', () => {
  test('When each route the app registers is called without a key, then all but the documented public ones answer 401', async (t) => {
    const { app } = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://app.example.com' } })
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

  test('When the public routes are called without a key, then only they answer, and they reveal no pet', async (t) => {
    const { app, auth } = await buildTestApp(t)
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
    const api = await buildTestApp(t)
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
    const api = await buildTestApp(t)
    assert.equal((await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).statusCode, 200)

    const cells = await readAllCells(api.databaseUrl)
    assert.ok(cells.some((cell) => cell.table === 'api_keys' && cell.column === 'key_hash'))
    const secret = api.key.slice('petstore_'.length)
    for (const cell of cells) assert.ok(!cell.value.includes(secret), `${cell.table}.${cell.column} holds the key`)
  })
})
