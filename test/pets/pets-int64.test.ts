import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { parseJson } from '../../src/infra/json/exact-json.js'
import type { Int64 } from '../../src/infra/json/int64.js'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'
import { manualClock } from '../helpers/clock.js'
import { type Event, nextLinkOf } from '../helpers/events.js'
import { storeListReads, untilCaching } from '../helpers/page-cache.js'

// int64 values a JavaScript number cannot hold, each as a JSON literal and as the exact value
const BEYOND_2_53: Array<[string, bigint]> = [
  ['9007199254740993', 2n ** 53n + 1n],
  ['4611686018427387904', 2n ** 62n],
  ['9223372036854775807', 2n ** 63n - 1n],
  ['-9223372036854775808', -(2n ** 63n)],
  ['1e18', 10n ** 18n],
  ['9007199254740993.0', 2n ** 53n + 1n]
]

interface ExactPet { id: number, name: string, categoryId: Int64, status: string }

/** The answer's body read exactly (int64 values beyond 2^53 as bigints), as a client must read it. */
function exactBody<T> (res: LightMyRequestResponse): T {
  return parseJson(res.body) as T
}

async function post (api: TestApp, payload: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json', ...headers }, payload })
}

async function patch (api: TestApp, petId: Int64 | string, payload: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'PATCH', url: `/v1/pets/${petId}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json', ...headers }, payload })
}

async function get (api: TestApp, url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'GET', url, headers: { ...api.auth, ...headers } })
}

async function createWithCategory (api: TestApp, literal: string): Promise<{ res: LightMyRequestResponse, pet: ExactPet }> {
  const res = await post(api, `{"name":"Rex","categoryId":${literal}}`)
  assert.equal(res.statusCode, 201, res.body)
  return { res, pet: exactBody(res) }
}

/** Every event of the feed, read exactly. */
async function feed (api: TestApp): Promise<Event[]> {
  const res = await get(api, '/v1/events?limit=100')
  assert.equal(res.statusCode, 200, res.body)
  nextLinkOf(res)
  return exactBody(res)
}

for (const store of testStores()) {
  describe(`int64 values beyond 2^53, exactly (${store})`, () => {
    for (const [literal, value] of BEYOND_2_53) {
      test(`When categoryId is ${literal}, then create, getPet, listPets (also from the page cache) and the feed answer ${value} digit for digit`, async (t) => {
        // the clock stands still, so the listed page cannot age out of the cache between the two lists
        const api = await buildTestApp(t, { store, clock: manualClock() })

        const { res, pet } = await createWithCategory(api, literal)

        assert.equal(pet.categoryId, value)
        assert.ok(res.body.includes(`"categoryId":${value},`), res.body)
        const read = await get(api, `/v1/pets/${pet.id}`)
        assert.equal(read.statusCode, 200)
        assert.equal(read.body, res.body, 'getPet answers the bytes createPet did')
        await untilCaching(api.app)
        const readsBefore = await storeListReads(api.app)
        const first = await get(api, '/v1/pets')
        const readsAfterFirst = await storeListReads(api.app)
        const cached = await get(api, '/v1/pets')
        assert.equal(readsAfterFirst, readsBefore + 1, 'the first list read the page from the store')
        assert.equal(await storeListReads(api.app), readsAfterFirst, 'the second list was served from the page cache: no store read')
        assert.equal(first.body, `[${res.body}]`)
        assert.equal(cached.body, first.body, 'a page served from the cache is the same')
        assert.equal(cached.body, `[{"id":${pet.id},"name":"Rex","categoryId":${value},"status":"available"}]`, 'the cached page holds the exact int64, byte for byte')
        const [created] = await feed(api)
        assert.deepEqual(created?.data, { pet })
      })
    }

    test('When a patch changes categoryId between int64 values beyond 2^53, then the answer, getPet and the pet.updated event carry both exactly', async (t) => {
      const api = await buildTestApp(t, { store })
      const { pet } = await createWithCategory(api, '9223372036854775807')

      const res = await patch(api, pet.id, '{"categoryId":-9223372036854775808}')

      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(exactBody(res), { ...pet, categoryId: -(2n ** 63n) })
      assert.equal((await get(api, `/v1/pets/${pet.id}`)).body, res.body)
      const [, updated] = await feed(api)
      assert.deepEqual(updated?.data, { pet: { ...pet, categoryId: -(2n ** 63n) }, previous: { categoryId: 2n ** 63n - 1n } })
      const back = await patch(api, pet.id, '{"categoryId":1}')
      assert.deepEqual(exactBody(back), { ...pet, categoryId: 1 })
    })

    test('When categoryId is 2^63 or -2^63 - 1, then create and patch are 400 naming the field and the bound, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const { pet } = await createWithCategory(api, '9007199254740993')

      assertError(await post(api, '{"name":"Rex","categoryId":9223372036854775808}'), 'invalid_request', 'body: field "categoryId" must be <= 9223372036854775807')
      assertError(await post(api, '{"name":"Rex","categoryId":-9223372036854775809}'), 'invalid_request', 'body: field "categoryId" must be >= -9223372036854775808')
      assertError(await patch(api, pet.id, '{"categoryId":9223372036854775808}'), 'invalid_request', 'body: field "categoryId" must be <= 9223372036854775807')
      assertError(await patch(api, pet.id, '{"categoryId":-9.223372036854775809e18}'), 'invalid_request', 'body: field "categoryId" must be >= -9223372036854775808')

      assert.equal((await get(api, '/v1/pets')).body, `[{"id":${pet.id},"name":"Rex","categoryId":9007199254740993,"status":"available"}]`)
    })

    test('When an Idempotency-Key is repeated with the same int64 body, then the replay is the first answer byte for byte; with 2^53 + 2 instead of 2^53 + 1 it is 422', async (t) => {
      const api = await buildTestApp(t, { store })
      const headers = { 'idempotency-key': 'int64-replay' }

      const first = await post(api, '{"name":"Rex","categoryId":9007199254740993}', headers)
      const replay = await post(api, '{"categoryId":9007199254740993,"name":"Rex"}', headers)
      const other = await post(api, '{"name":"Rex","categoryId":9007199254740994}', headers)

      assert.equal(first.statusCode, 201, first.body)
      assert.equal(replay.statusCode, 201, replay.body)
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.body, first.body)
      assertError(other, 'idempotency_key_reused')
      assert.equal(exactBody<ExactPet[]>(await get(api, '/v1/pets')).length, 1)
    })

    test('When a pet has an int64 category beyond 2^53, then its ETag revalidates getPet (304) and guards updatePet (If-Match)', async (t) => {
      const api = await buildTestApp(t, { store })
      const { pet } = await createWithCategory(api, '-9223372036854775808')
      const read = await get(api, `/v1/pets/${pet.id}`)
      const etag = String(read.headers.etag)

      const notModified = await get(api, `/v1/pets/${pet.id}`, { 'if-none-match': etag })
      const unchanged = await patch(api, pet.id, '{}')
      const changed = await patch(api, pet.id, '{"categoryId":4611686018427387904}', { 'if-match': etag })
      const stale = await patch(api, pet.id, '{"categoryId":1}', { 'if-match': etag })

      assert.equal(notModified.statusCode, 304)
      assert.equal(unchanged.headers.etag, etag, 'updatePet tags the same bytes getPet sent')
      assert.equal(changed.statusCode, 200, changed.body)
      assert.notEqual(changed.headers.etag, etag)
      assert.equal((await get(api, `/v1/pets/${pet.id}`)).headers.etag, changed.headers.etag)
      assertError(stale, 'precondition_failed')
    })

    test('When petId is a positive int64 no pet has, then getPet and updatePet are 404 naming it; beyond int64 it is 400', async (t) => {
      const api = await buildTestApp(t, { store })
      await createWithCategory(api, '1')

      for (const petId of ['9007199254740993', '9223372036854775807']) {
        assertError(await get(api, `/v1/pets/${petId}`), 'pet_not_found', `No pet has id ${petId}.`)
        assertError(await patch(api, petId, '{"name":"Max"}'), 'pet_not_found', `No pet has id ${petId}.`)
      }
      assertError(await get(api, '/v1/pets/9223372036854775808'), 'invalid_request', 'path parameter "petId" must be <= 9223372036854775807')
      assertError(await patch(api, '9223372036854775808', '{"name":"Max"}'), 'invalid_request', 'path parameter "petId" must be <= 9223372036854775807')
      assert.equal(exactBody<ExactPet[]>(await get(api, '/v1/pets'))[0]?.name, 'Rex')
    })

    test('When a body beyond 2^53 has a __proto__ key, a duplicate key or a fraction, then it is judged as any other body', async (t) => {
      const api = await buildTestApp(t, { store })

      assertError(await post(api, '{"name":"Rex","categoryId":9007199254740993,"__proto__":{"x":1}}'), 'invalid_request', '"__proto__"')
      assertError(await post(api, '{"name":"Rex","categoryId":9007199254740993,"constructor":{"prototype":{"x":1}}}'), 'invalid_request', '"constructor.prototype"')
      assertError(await post(api, '{"name":"Rex","categoryId":9007199254740993,'), 'malformed_json')
      // a leading zero is not JSON, however many digits follow
      assertError(await post(api, '{"name":"Rex","categoryId":012345678901234567890}'), 'malformed_json')
      assertError(await post(api, '{"name":"Rex","categoryId":9007199254740993.5}'), 'invalid_request', 'got 9007199254740993.5, which has a fractional part')
      // the last of duplicate keys wins, on the exact path as on the ordinary one
      const { pet } = await createWithCategory(api, '9007199254740993,"categoryId":9223372036854775807')
      assert.equal(pet.categoryId, 2n ** 63n - 1n)
      const { pet: ordinary } = await createWithCategory(api, '9007199254740993,"categoryId":2')
      assert.equal(ordinary.categoryId, 2)
    })
  })
}

describe('the served document and int64', () => {
  test('When the document is read, then categoryId, Pet.id and petId have int64\'s bounds digit for digit, in JSON and YAML, also on the /docs page', async (t) => {
    const api = await buildTestApp(t, { withKey: false })

    const json = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body
    const yaml = (await api.app.inject({ method: 'GET', url: '/v1/openapi.yaml' })).body

    const document = parseJson(json) as { components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> }, paths: Record<string, Record<string, { parameters?: Array<{ name: string, schema: Record<string, unknown> }> }>> }
    const { NewPet, PetPatch, Pet } = document.components.schemas
    for (const schema of [NewPet?.properties.categoryId, PetPatch?.properties.categoryId, Pet?.properties.categoryId]) {
      assert.deepEqual([schema?.type, schema?.format, schema?.minimum, schema?.maximum], ['integer', 'int64', -(2n ** 63n), 2n ** 63n - 1n])
    }
    assert.deepEqual([Pet?.properties.id?.minimum, Pet?.properties.id?.maximum], [1, 2n ** 63n - 1n])
    const petId = document.paths['/pets/{petId}']?.get?.parameters?.find((parameter) => parameter.name === 'petId')
    assert.deepEqual([petId?.schema.minimum, petId?.schema.maximum], [1, 2n ** 63n - 1n])
    assert.ok(!json.includes('9223372036854776000'), 'no bound is rounded')
    assert.match(yaml, /\n\s+minimum: -9223372036854775808\n\s+maximum: 9223372036854775807\n/)
    assert.ok(!yaml.includes('9223372036854776000'))
    assert.match(String(NewPet?.properties.categoryId?.description), /JSON\.parse.*@petstore\/client/)
    // the /docs page's copy of the document too
    const page = await api.app.inject({ method: 'GET', url: '/docs/json' })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /"minimum":-9223372036854775808,"maximum":9223372036854775807/)
    assert.ok(!page.body.includes('9223372036854776000'))
  })
})
