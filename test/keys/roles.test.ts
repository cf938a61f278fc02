import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { BODY_LIMIT_BYTES } from '../../src/infra/http/content-types.js'
import { buildTestApp, listAllPets, postPet, testStores, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { captureLogs } from '../helpers/log-capture.js'

const INSUFFICIENT_SCOPE = 'Bearer realm="petstore", error="insufficient_scope"'

/** A key with the read role, created in the app's store as `keys create --role read` does. */
async function createReadKey (api: TestApp, name = 'storefront'): Promise<{ authorization: string }> {
  const key = generateApiKey()
  await api.app.keyStore.createApiKey(name, hashApiKey(key), 'read')
  return { authorization: `Bearer ${key}` }
}

function environmentKey (): string {
  return `env-${randomBytes(24).toString('base64url')}`
}

/** Creates that a read key must not get past, whatever their body: each is refused before it is read. */
const CREATES_WITH_ANY_BODY: Array<[string, Omit<InjectOptions, 'headers'>, Record<string, string>]> = [
  ['a valid body', { payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) }, { 'content-type': 'application/json' }],
  ['a body missing its fields', { payload: '{}' }, { 'content-type': 'application/json' }],
  ['a body that is not JSON', { payload: '{"name": "Rex",' }, { 'content-type': 'application/json' }],
  ['a body that is not application/json', { payload: 'name=Rex' }, { 'content-type': 'application/x-www-form-urlencoded' }],
  ['a body over the size limit', { payload: JSON.stringify({ name: 'x'.repeat(BODY_LIMIT_BYTES) }) }, { 'content-type': 'application/json' }],
  ['a malformed Idempotency-Key', { payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) }, { 'content-type': 'application/json', 'idempotency-key': '' }]
]

function assertInsufficientScope (res: LightMyRequestResponse): void {
  assertError(res, 'insufficient_scope', 'write role')
  assert.equal(res.headers['www-authenticate'], INSUFFICIENT_SCOPE)
}

for (const store of testStores()) {
  describe(`API key roles (${store})`, () => {
    test('When a read key lists pets, gets a pet and asks for store orders, then each answers as it would to a write key', async (t) => {
      const api = await buildTestApp(t, { store })
      const readKey = await createReadKey(api)
      const created = await postPet(api, { name: 'Rex', categoryId: 1 })

      const list = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: readKey })
      const one = await api.app.inject({ method: 'GET', url: `/v1/pets/${String(created.json().id)}`, headers: readKey })
      const head = await api.app.inject({ method: 'HEAD', url: '/v1/pets', headers: readKey })
      const orders = await api.app.inject({ method: 'GET', url: '/v1/store/orders', headers: readKey })

      assert.equal(list.statusCode, 200)
      assert.deepEqual(list.json(), [created.json()])
      assert.equal(one.statusCode, 200)
      assert.equal(head.statusCode, 200)
      assert.equal(orders.statusCode, 200)
      assert.deepEqual(orders.json(), [])
    })

    for (const [what, request, headers] of CREATES_WITH_ANY_BODY) {
      test(`When a read key creates a pet with ${what}, then 403 insufficient_scope with the RFC 6750 challenge, and nothing is created`, async (t) => {
        const api = await buildTestApp(t, { store })
        const readKey = await createReadKey(api)

        const res = await api.app.inject({ method: 'POST', url: '/v1/pets', ...request, headers: { ...readKey, ...headers } })

        assertInsufficientScope(res)
        assert.match(String(res.headers['ratelimit']), /^"per-key";r=\d+;t=\d+$/, 'a 403 carries the key\'s rate-limit fields like every answer to a valid key')
        assert.deepEqual(await listAllPets(api), [])
      })
    }

    test('When a write key (the default role) creates a pet, then 201', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await postPet(api, { name: 'Rex', categoryId: 1 })

      assert.equal(res.statusCode, 201)
      assert.equal((await api.app.keyStore.listApiKeys())[0]?.role, 'write')
    })

    test('When a read key uses a path or method that does not exist, then 404 or 405 as for any key, not 403', async (t) => {
      const api = await buildTestApp(t, { store })
      const readKey = await createReadKey(api)

      const missing = await api.app.inject({ method: 'POST', url: '/v1/no-such-route', headers: readKey })
      const notAllowed = await api.app.inject({ method: 'DELETE', url: '/v1/pets/1', headers: readKey })

      assertError(missing, 'not_found')
      assertError(notAllowed, 'method_not_allowed')
      assert.equal(notAllowed.headers.allow, 'GET, PATCH, HEAD')
    })

    test('When a read key has no valid credentials at all, then 401 comes first, not 403', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { authorization: 'Bearer petstore_unknown', 'content-type': 'application/json' }, payload: '{}' })

      assertError(res, 'unauthorized')
    })

    test('When keys come from PETSTORE_API_KEYS and PETSTORE_READ_API_KEYS, then the first may write and the second only read', async (t) => {
      const writeKey = environmentKey()
      const readKey = environmentKey()
      const api = await buildTestApp(t, { store, withKey: false, env: { PETSTORE_API_KEYS: writeKey, PETSTORE_READ_API_KEYS: readKey } })
      const create = (key: string): Promise<LightMyRequestResponse> => api.app.inject({
        method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'Rex', categoryId: 1 })
      })

      const byWriteKey = await create(writeKey)
      const byReadKey = await create(readKey)
      const listByReadKey = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${readKey}` } })

      assert.equal(byWriteKey.statusCode, 201)
      assertInsufficientScope(byReadKey)
      assert.equal(listByReadKey.statusCode, 200)
      assert.equal(listByReadKey.json().length, 1)
    })

    test('When a read key is refused, then the metrics count it by operation, key name and role, and the access line names the key and role but never the key', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })
      const key = generateApiKey()
      await api.app.keyStore.createApiKey('storefront', hashApiKey(key), 'read')

      const refused = await postPet({ ...api, auth: { authorization: `Bearer ${key}` } }, { name: 'Rex', categoryId: 1 })
      const listed = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })

      assert.equal(refused.statusCode, 403)
      assert.equal(listed.statusCode, 200)
      const metrics = await api.app.metrics.registry.metrics()
      assert.match(metrics, /^petstore_insufficient_scope_total\{operation="createPet",api_key="storefront",role="read"\} 1$/m)
      const accessLines = logs.records().filter((record) => record.msg === 'request completed')
      assert.deepEqual(accessLines.map(({ method, statusCode, keyName, keyRole }) => ({ method, statusCode, keyName, keyRole })), [
        { method: 'POST', statusCode: 403, keyName: 'storefront', keyRole: 'read' },
        { method: 'GET', statusCode: 200, keyName: 'storefront', keyRole: 'read' }
      ])
      assert.ok(logs.lines.every((line) => !line.includes(key) && !line.includes(hashApiKey(key))), 'a log line holds the key or its hash')
    })
  })
}

describe('API key roles in the OpenAPI document', () => {
  test('When the document is served, then every operation that writes has the 403 with its challenge, and no operation that reads has it', async (t) => {
    const api = await buildTestApp(t)

    const document = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()

    const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown[], responses: Record<string, { 'x-stability'?: string, headers?: Record<string, { example?: string, schema: { enum?: string[] } }> }> }>>)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
      .filter(({ operation }) => operation.security === undefined || operation.security.length > 0)
    const writing = operations.filter(({ method }) => method !== 'get' && method !== 'head')
    assert.ok(writing.some(({ path, method }) => path === '/pets' && method === 'post'), 'createPet is among the writing operations')
    for (const { path, method, operation } of writing) {
      const forbidden = operation.responses['403']
      assert.ok(forbidden !== undefined, `${method} ${path} documents no 403`)
      assert.equal(forbidden.headers?.['WWW-Authenticate']?.example, INSUFFICIENT_SCOPE)
      assert.deepEqual(forbidden.headers?.['WWW-Authenticate']?.schema.enum, [INSUFFICIENT_SCOPE])
      assert.equal(forbidden['x-stability'], 'beta', 'key roles are an addition to the interface')
    }
    for (const { path, method, operation } of operations.filter(({ method }) => method === 'get')) {
      assert.equal(operation.responses['403'], undefined, `${method} ${path} documents a 403 it never answers`)
    }
    assert.ok(document.components.schemas.Error.properties.code.enum.includes('insufficient_scope'))
  })
})
