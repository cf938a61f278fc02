import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { BODY_LIMIT_BYTES } from '../../src/infra/http/content-types.js'
import { API_KEY_ROLES, type ApiKeyRole } from '../../src/capabilities/keys/index.js'
import { addAdminOnlyRoutes, ADMIN_ONLY_PATH, OPEN_PATH } from '../helpers/admin-only-route.js'
import { buildTestApp, listAllPets, postPet, testStores, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { captureLogs } from '../helpers/log-capture.js'
import { PROJECT_ROOT } from '../helpers/processes.js'

const INSUFFICIENT_SCOPE = 'Bearer realm="petstore", error="insufficient_scope"'

/** A key with `role`, created in the app's store as `keys create --role <role>` does. */
async function createKeyWithRole (api: TestApp, role: ApiKeyRole, name: string = role): Promise<{ authorization: string }> {
  const key = generateApiKey()
  await api.app.keyStore.createApiKey(name, hashApiKey(key), role)
  return { authorization: `Bearer ${key}` }
}

/** A key with the read role, created in the app's store as `keys create --role read` does. */
async function createReadKey (api: TestApp, name = 'storefront'): Promise<{ authorization: string }> {
  return await createKeyWithRole(api, 'read', name)
}

/** Sends a JSON body with `headers`' key. */
async function send (api: TestApp, headers: { authorization: string }, method: 'POST' | 'PATCH', url: string, body: unknown): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
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

    test('When an admin key creates and changes a pet, places and changes an order and reads them, then each answers as it does to a write key', async (t) => {
      const api = await buildTestApp(t, { store })
      const admin = await createKeyWithRole(api, 'admin', 'operator')

      const pet = await send(api, admin, 'POST', '/v1/pets', { name: 'Rex', categoryId: 1 })
      const renamed = await send(api, admin, 'PATCH', `/v1/pets/${String(pet.json().id)}`, { name: 'Max' })
      const order = await send(api, admin, 'POST', '/v1/store/orders', { petId: pet.json().id })
      const approved = await send(api, admin, 'PATCH', `/v1/store/orders/${String(order.json().id)}`, { status: 'approved' })
      const listed = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: admin })
      const events = await api.app.inject({ method: 'GET', url: '/v1/events', headers: admin })

      assert.deepEqual([pet, renamed, order, approved, listed, events].map((res) => res.statusCode), [201, 200, 201, 200, 200, 200])
      assert.deepEqual(listed.json(), [{ id: pet.json().id, name: 'Max', categoryId: 1, status: 'pending' }])
      assert.equal(approved.json().status, 'approved')
    })

    test('When a read, write, admin or no key calls an operation declared admin-only, then read and write get 403 insufficient_scope naming the admin role, admin is served, no key 401', async (t) => {
      const api = await buildTestApp(t, { store })
      await addAdminOnlyRoutes(api.app)
      const keys = { read: await createReadKey(api), write: await createKeyWithRole(api, 'write'), admin: await createKeyWithRole(api, 'admin') }

      for (const method of ['GET', 'HEAD', 'POST'] as const) {
        const operation = method === 'POST' ? 'postAdminProbe' : 'getAdminProbe'
        for (const role of ['read', 'write'] as const) {
          const res = await api.app.inject({ method, url: ADMIN_ONLY_PATH, headers: keys[role] })
          assert.equal(res.statusCode, 403, `${method} by a ${role} key`)
          assert.equal(res.headers['www-authenticate'], INSUFFICIENT_SCOPE)
          if (method !== 'HEAD') assertError(res, 'insufficient_scope', `This API key has the ${role} role, `)
          if (method !== 'HEAD') assert.ok(res.json().message.endsWith(`${operation} needs a key with the admin role.`), res.body)
        }
        const byAdmin = await api.app.inject({ method, url: ADMIN_ONLY_PATH, headers: keys.admin })
        const withoutKey = await api.app.inject({ method, url: ADMIN_ONLY_PATH })
        assert.equal(byAdmin.statusCode, 200, `${method} by an admin key: ${byAdmin.body}`)
        assert.equal(withoutKey.statusCode, 401, `${method} without a key`)
      }
    })

    test('When a write key is refused an admin-only operation, then the metrics count it with the write role, its series of every admin-only operation at 0 from its first request', async (t) => {
      const api = await buildTestApp(t, { store })
      await addAdminOnlyRoutes(api.app)
      const write = await createKeyWithRole(api, 'write', 'back-office')

      const served = await api.app.inject({ method: 'GET', url: OPEN_PATH, headers: write })
      const before = await api.app.metrics.registry.metrics()
      const refused = await api.app.inject({ method: 'POST', url: ADMIN_ONLY_PATH, headers: write })
      const after = await api.app.metrics.registry.metrics()

      assert.equal(served.statusCode, 200)
      assert.equal(refused.statusCode, 403)
      assert.match(before, /^petstore_insufficient_scope_total\{operation="getAdminProbe",api_key="back-office",role="write"\} 0$/m)
      assert.match(before, /^petstore_insufficient_scope_total\{operation="postAdminProbe",api_key="back-office",role="write"\} 0$/m)
      assert.doesNotMatch(before, /operation="getOpenProbe",api_key="back-office"/, 'a write key is never refused getOpenProbe, so it has no series for it')
      assert.match(after, /^petstore_insufficient_scope_total\{operation="postAdminProbe",api_key="back-office",role="write"\} 1$/m)
    })

    test('When keys come from PETSTORE_ADMIN_API_KEYS and PETSTORE_API_KEYS, then the first may call admin-only operations and write, the second only write', async (t) => {
      const writeKey = environmentKey()
      const adminKey = environmentKey()
      const api = await buildTestApp(t, { store, withKey: false, env: { PETSTORE_API_KEYS: writeKey, PETSTORE_ADMIN_API_KEYS: adminKey } })
      await addAdminOnlyRoutes(api.app)
      const admin = { authorization: `Bearer ${adminKey}` }
      const write = { authorization: `Bearer ${writeKey}` }

      const createdByAdmin = await send(api, admin, 'POST', '/v1/pets', { name: 'Rex', categoryId: 1 })
      const probeByAdmin = await api.app.inject({ method: 'POST', url: ADMIN_ONLY_PATH, headers: admin })
      const probeByWrite = await api.app.inject({ method: 'POST', url: ADMIN_ONLY_PATH, headers: write })

      assert.equal(createdByAdmin.statusCode, 201)
      assert.equal(probeByAdmin.statusCode, 200)
      assertError(probeByWrite, 'insufficient_scope', 'postAdminProbe needs a key with the admin role')
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

    const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown[], responses: Record<string, { description?: string, 'x-stability'?: string, headers?: Record<string, { example?: string, schema: { enum?: string[] } }> }> }>>)
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
    // a GET answers 403 only when its route declares it admin-only (the webhook endpoints'), as its 403 says
    for (const { path, method, operation } of operations.filter(({ method }) => method === 'get')) {
      const forbidden = operation.responses['403']
      assert.ok(forbidden === undefined || forbidden.description?.includes('needs the `admin` role') === true, `${method} ${path} documents a 403 it never answers`)
    }
    assert.ok(document.components.schemas.Error.properties.code.enum.includes('insufficient_scope'))
  })

  test('When an operation is declared admin-only, then its 403 (also on a GET) says it needs the admin role, its example is what a write key is told, and the API description has one row per role', async (t) => {
    const api = await buildTestApp(t)
    await addAdminOnlyRoutes(api.app)

    const document = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()

    const probe = document.paths[ADMIN_ONLY_PATH.slice('/v1'.length)]
    for (const [method, operationId] of [['get', 'getAdminProbe'], ['post', 'postAdminProbe']] as const) {
      const forbidden = probe[method].responses['403']
      assert.match(forbidden.description, /has the `read` or `write` role, and this operation needs the `admin` role/)
      assert.deepEqual(forbidden.content['application/json'].examples.insufficient_scope.value, {
        code: 'insufficient_scope',
        message: `This API key has the write role, which may call every operation but the admin-only ones; ${operationId} needs a key with the admin role.`,
        status: 403
      })
    }
    assert.match(document.paths['/pets'].post.responses['403'].description, /has the `read` role, and this operation needs the `write` role/)
    const rows = [...(document.info.description as string).matchAll(/^\| `([a-z]+)` \| .+ \|$/gm)].map(([, role]) => role)
    assert.deepEqual(rows, [...API_KEY_ROLES])
  })
})

// the served description's table is built from API_KEY_ROLES; the operators' table is written by hand, so it is checked here
test('When docs/operations.md\'s "Key roles" table is read, then it has one row per role, in their order, and README links to it', async () => {
  const operations = await readFile(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8')
  const readme = await readFile(join(PROJECT_ROOT, 'README.md'), 'utf8')

  const section = operations.split('### Key roles')[1]?.split('\n#')[0] ?? ''
  const rows = [...section.matchAll(/^\| `([a-z]+)` \|/gm)].map(([, role]) => role)
  assert.deepEqual(rows, [...API_KEY_ROLES])
  assert.match(readme, /\(docs\/operations\.md#key-roles\)/)
})
