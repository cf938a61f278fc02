import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { STATUS_TRANSITIONS } from '../../src/capabilities/pets/status-transitions.js'
import { PET_STATUSES, type Pet, type PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, patchPet, patchPetWhileLocked, testStores, type TestApp } from '../helpers/build-app.js'

const ALLOWED: Array<[PetStatus, PetStatus]> = [['available', 'pending'], ['pending', 'available'], ['available', 'sold'], ['pending', 'sold']]
const FORBIDDEN: Array<[PetStatus, PetStatus]> = [['sold', 'available'], ['sold', 'pending']]

/** The status list `status`, first page (limit 100), as ids. */
async function listedIds (api: TestApp, status: PetStatus): Promise<number[]> {
  const res = await api.app.inject({ method: 'GET', url: `/v1/pets?limit=100&status=${status}`, headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<Pet[]>().map((pet) => pet.id)
}

/** The pet as getPet reads it now. */
async function readPet (api: TestApp, id: number): Promise<Pet> {
  const res = await getPet(api, id)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** A 200 answer of updatePet: the pet it carries, its strong ETag, and no deprecation headers. */
function assertUpdated (res: LightMyRequestResponse, expected: Pet): string {
  assert.equal(res.statusCode, 200, res.body)
  assert.match(String(res.headers['content-type']), /^application\/json/)
  assert.deepEqual(res.json(), expected)
  const etag = res.headers.etag
  assert.equal(typeof etag, 'string')
  assert.match(String(etag), /^"[^"]+"$/)
  assertNotDeprecated(res)
  return String(etag)
}

function assertNotDeprecated (res: LightMyRequestResponse): void {
  assert.equal(res.headers.deprecation, undefined)
  assert.equal(res.headers.sunset, undefined)
  assert.doesNotMatch(String(res.headers.link ?? ''), /successor-version/)
}

for (const store of testStores()) {
  describe(`updatePet: the status lifecycle (${store})`, () => {
    for (const [from, to] of ALLOWED) {
      test(`When a ${from} pet is patched to ${to}, then 200 answers it ${to}, and getPet and the status lists show it`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3, status: from })

        const res = await patchPet(api, pet.id, { status: to })

        assertUpdated(res, { ...pet, status: to })
        assert.deepEqual(await readPet(api, pet.id), { ...pet, status: to })
        assert.deepEqual(await listedIds(api, to), [pet.id])
        assert.deepEqual(await listedIds(api, from), [])
      })
    }

    for (const [from, to] of FORBIDDEN) {
      test(`When a ${from} pet is patched to ${to}, then 409 invalid_transition names both states and nothing changes`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3, status: from })

        const res = await patchPet(api, pet.id, { status: to, name: 'Max' })

        const { message } = assertError(res, 'invalid_transition')
        assert.match(message, new RegExp(`"${from}".*"${to}"`))
        assertNotDeprecated(res)
        assert.deepEqual(await readPet(api, pet.id), pet)
      })
    }

    test('When the table of transitions is read, then it is the one the issue fixes: sold is final, the others reach each other and sold', () => {
      assert.deepEqual(STATUS_TRANSITIONS, { available: ['pending', 'sold'], pending: ['available', 'sold'], sold: [] })
    })

    for (const status of PET_STATUSES) {
      test(`When a ${status} pet is given the status it has, then 200 and nothing changes, its ETag included`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3, status })
        const before = await getPet(api, pet.id)

        const res = await patchPet(api, pet.id, { status })

        assert.equal(assertUpdated(res, pet), before.headers.etag)
        assert.deepEqual(await readPet(api, pet.id), pet)
      })

      test(`When the name and category of a ${status} pet are corrected, then 200 with the new values and the status kept`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3, status })

        const renamed = await patchPet(api, pet.id, { name: 'Max' })
        const recategorised = await patchPet(api, pet.id, { categoryId: -Number.MAX_SAFE_INTEGER })

        assertUpdated(renamed, { ...pet, name: 'Max' })
        assertUpdated(recategorised, { ...pet, name: 'Max', categoryId: -Number.MAX_SAFE_INTEGER })
        assert.deepEqual(await readPet(api, pet.id), { ...pet, name: 'Max', categoryId: -Number.MAX_SAFE_INTEGER })
      })
    }

    test('When the patch is {}, then 200 answers the pet unchanged with the ETag getPet sends', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const read = await getPet(api, pet.id)

      const res = await patchPet(api, pet.id, {})

      assert.equal(assertUpdated(res, pet), read.headers.etag)
    })

    test('When a patch sets all three fields, then they change together and other pets are untouched', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const other = await createdPet(api, { name: 'Tom', categoryId: 4 })

      const res = await patchPet(api, pet.id, { name: 'Rex II', categoryId: 9, status: 'sold' })

      assertUpdated(res, { id: pet.id, name: 'Rex II', categoryId: 9, status: 'sold' })
      assert.deepEqual(await readPet(api, other.id), other)
    })
  })

  describe(`updatePet: what it refuses (${store})`, () => {
    const invalidBodies: Array<[string, string, string]> = [
      ['null name', '{"name":null}', 'field "name" must be a string, not null'],
      ['null categoryId', '{"categoryId":null}', 'field "categoryId" must be an integer, not null'],
      ['null status', '{"status":null}', 'field "status"'],
      ['an id', '{"id":2}', 'field "id" is not allowed'],
      ['an unknown field', '{"name":"Max","owner":"me"}', 'field "owner" is not allowed'],
      ['an empty name', '{"name":""}', 'field "name" must not be empty'],
      ['a blank name', '{"name":"   "}', 'field "name" must be text with at least one visible character'],
      ['a name with a control character', '{"name":"a\\u0000b"}', 'field "name" must be text with at least one visible character'],
      ['a name too long', JSON.stringify({ name: 'x'.repeat(101) }), 'field "name" must be at most 100 characters long'],
      ['a categoryId as a string', '{"categoryId":"5"}', 'field "categoryId" must be an integer'],
      ['a fractional categoryId', '{"categoryId":1.5}', 'field "categoryId" must be an integer'],
      ['a categoryId whose fraction parsing would round away', '{"categoryId":1.0000000000000001}', 'field "categoryId" must be an integer, got 1.0000000000000001'],
      ['a categoryId beyond 2^63 - 1', '{"categoryId":9223372036854775808}', 'field "categoryId" must be <= 9223372036854775807'],
      ['a categoryId below -2^63', '{"categoryId":-9223372036854775809}', 'field "categoryId" must be >= -9223372036854775808'],
      ['an unknown status', '{"status":"lost"}', 'field "status" must be one of "available", "pending", "sold"'],
      ['a status in upper case', '{"status":"SOLD"}', 'field "status" must be one of'],
      ['an array', '[{"status":"sold"}]', 'body must be an object'],
      ['a string', '"sold"', 'body must be an object'],
      ['null', 'null', 'body must be an object'],
      ['a __proto__ key', '{"__proto__":{"status":"sold"}}', '"__proto__"']
    ]
    for (const [what, payload, message] of invalidBodies) {
      test(`When the patch holds ${what}, then 400 invalid_request says so and nothing changes`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

        const res = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload })

        assertError(res, 'invalid_request', message)
        assert.deepEqual(await readPet(api, pet.id), pet)
      })
    }

    test('When the patch writes a whole categoryId as 4.0 or 4e0, then it is the integer 4, as for createPet', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      for (const payload of ['{"categoryId":4.0}', '{"categoryId":4e0}']) {
        const res = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload })

        assert.equal(res.statusCode, 200, res.body)
        assert.deepEqual(res.json(), { ...pet, categoryId: 4 })
      }
    })

    test('When the body is not JSON or is empty, then 400 (malformed_json, invalid_request) and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const send = async (payload: string): Promise<LightMyRequestResponse> =>
        api.app.inject({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload })

      assertError(await send('{"status":'), 'malformed_json')
      assertError(await send(''), 'invalid_request', 'body')
      assertError(await api.app.inject({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: api.auth }), 'invalid_request', 'body')
      assert.deepEqual(await readPet(api, pet.id), pet)
    })

    for (const petId of ['0', '-1', 'abc', '1.5', '1e1', '9223372036854775808']) {
      test(`When petId is ${petId}, then 400 names the path parameter`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await patchPet(api, petId, { status: 'sold' })

        assertError(res, 'invalid_request', 'path parameter "petId"')
        assertNotDeprecated(res)
      })
    }

    for (const ifMatch of ['abc', '"a" "b"', 'W/', '"unterminated', '**']) {
      test(`When If-Match is ${ifMatch}, then 400 names the header and nothing changes`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

        const res = await patchPet(api, pet.id, { status: 'sold' }, { 'if-match': ifMatch })

        assertError(res, 'invalid_request', 'header "if-match" must be * or a comma-separated list of quoted entity tags')
        assert.deepEqual(await readPet(api, pet.id), pet)
      })
    }

    test('When the body is sent as application/merge-patch+json or application/json, with or without charset=utf-8, then it is taken', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      for (const [index, contentType] of ['application/merge-patch+json', 'application/merge-patch+json; charset=utf-8', 'application/json', 'Application/JSON;charset=UTF-8'].entries()) {
        const res = await patchPet(api, pet.id, { categoryId: index }, { 'content-type': contentType })
        assertUpdated(res, { ...pet, categoryId: index })
      }
    })

    for (const contentType of ['text/plain', 'application/json-patch+json', 'application/x-www-form-urlencoded', 'application/merge-patch+json; charset=latin1']) {
      test(`When the body is sent as ${contentType}, then 415 unsupported_media_type and nothing changes`, async (t) => {
        const api = await buildTestApp(t, { store })
        const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

        const res = await patchPet(api, pet.id, { status: 'sold' }, { 'content-type': contentType })

        assertError(res, 'unsupported_media_type', contentType.includes('charset') ? 'charset=latin1' : 'application/merge-patch+json or application/json')
        assert.deepEqual(await readPet(api, pet.id), pet)
      })
    }

    test('When a create is sent as application/merge-patch+json, then it is still 415: only updatePet takes a merge patch', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"name":"Rex","categoryId":1}' })

      assertError(res, 'unsupported_media_type', 'application/json')
      assert.deepEqual(await listedIds(api, 'available'), [])
    })

    test('When the body is over the limit, then 413 payload_too_large and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      const res = await patchPet(api, pet.id, { name: 'x'.repeat(20_000) })

      assertError(res, 'payload_too_large', '16384')
      assert.deepEqual(await readPet(api, pet.id), pet)
    })

    test('When no pet has the id, then 404 pet_not_found, also with If-Match: * (a precondition needs a pet to judge)', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      const plain = await patchPet(api, pet.id + 1, { status: 'sold' })
      const star = await patchPet(api, pet.id + 1, { status: 'sold' }, { 'if-match': '*' })

      for (const res of [plain, star]) {
        assertError(res, 'pet_not_found', String(pet.id + 1))
        assertNotDeprecated(res)
        assert.equal(res.headers.etag, undefined)
      }
    })

    test('When the key is missing or unknown, then 401 comes first: before the pet, the body or its type is looked at', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      for (const authorization of [undefined, 'Bearer petstore_unknown_key_of_enough_length_00000000000']) {
        for (const [petId, contentType, payload] of [[pet.id, 'application/merge-patch+json', '{"status":"sold"}'], [pet.id + 1, 'application/merge-patch+json', '{}'], [pet.id, 'text/plain', 'x'], [pet.id, 'application/json', '{"id":1}']] as const) {
          const headers: Record<string, string> = { 'content-type': contentType }
          if (authorization !== undefined) headers.authorization = authorization
          const res = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${petId}`, headers, payload })
          assertError(res, 'unauthorized')
          assert.match(String(res.headers['www-authenticate']), /^Bearer realm="petstore"/)
          assertNotDeprecated(res)
        }
      }
      assert.deepEqual(await readPet(api, pet.id), pet)
    })

    test('When the key is over its request limit, then 429 rate_limited with Retry-After and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '3' } })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      assert.equal((await patchPet(api, pet.id, { name: 'Max' })).statusCode, 200)
      assert.equal((await patchPet(api, pet.id, { name: 'Rex' })).statusCode, 200)

      const res = await patchPet(api, pet.id, { status: 'sold' })

      assertError(res, 'rate_limited')
      assert.match(String(res.headers['retry-after']), /^\d+$/)
      assert.equal(res.headers['ratelimit-policy'], '"per-key";q=3;w=60')
      const unlimited = await buildTestApp(t, { databaseUrl: api.databaseUrl, withKey: false })
      const read = await unlimited.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: api.auth })
      assert.deepEqual(read.json(), pet)
    })

    test('When another writer holds the pet longer than the store waits, then 503 service_unavailable with Retry-After, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store, env: { DATABASE_TIMEOUT_MS: '300' } })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const res = await patchPetWhileLocked(api, pet.id, { status: 'sold' })

      assertError(res, 'service_unavailable')
      assert.equal(res.headers['retry-after'], '1')
      assert.deepEqual(await readPet(api, pet.id), pet)
      assertUpdated(await patchPet(api, pet.id, { status: 'sold' }), { ...pet, status: 'sold' })
    })
  })

  describe(`updatePet: ETag and If-Match (${store})`, () => {
    test('When a pet is changed, then the answer\'s ETag is the one getPet then sends, and differs from the one before', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const before = await getPet(api, pet.id)

      const etag = assertUpdated(await patchPet(api, pet.id, { status: 'pending' }), { ...pet, status: 'pending' })

      const after = await getPet(api, pet.id)
      assert.equal(after.headers.etag, etag)
      assert.notEqual(etag, before.headers.etag)
    })

    test('When getPet is revalidated with the tag from before a change, then it answers the new pet in full; with the new tag, 304', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const oldTag = String((await getPet(api, pet.id)).headers.etag)
      const newTag = assertUpdated(await patchPet(api, pet.id, { name: 'Max' }), { ...pet, name: 'Max' })

      const stale = await getPet(api, pet.id, { 'if-none-match': oldTag })
      const fresh = await getPet(api, pet.id, { 'if-none-match': newTag })

      assert.equal(stale.statusCode, 200)
      assert.deepEqual(stale.json(), { ...pet, name: 'Max' })
      assert.equal(stale.headers.etag, newTag)
      assert.equal(fresh.statusCode, 304)
    })

    test('When If-Match carries the current tag, a list holding it, or *, then the change is made', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const tag = String((await getPet(api, pet.id)).headers.etag)

      const exact = await patchPet(api, pet.id, { status: 'pending' }, { 'if-match': tag })
      const listed = await patchPet(api, pet.id, { status: 'available' }, { 'if-match': `"other", ${String(exact.headers.etag)}, "more"` })
      const star = await patchPet(api, pet.id, { status: 'sold' }, { 'if-match': '*' })

      const pending = assertUpdated(exact, { ...pet, status: 'pending' })
      assert.notEqual(pending, tag)
      assertUpdated(listed, { ...pet, status: 'available' })
      assertUpdated(star, { ...pet, status: 'sold' })
    })

    test('When If-Match carries a stale tag, the weak form of the current one, or another pet\'s, then 412 precondition_failed and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const other = await createdPet(api, { name: 'Tom', categoryId: 3 })
      const stale = String((await getPet(api, pet.id)).headers.etag)
      const current = assertUpdated(await patchPet(api, pet.id, { name: 'Max' }), { ...pet, name: 'Max' })
      const otherTag = String((await getPet(api, other.id)).headers.etag)

      for (const ifMatch of [stale, `W/${current}`, otherTag, '"x", "y"']) {
        const res = await patchPet(api, pet.id, { status: 'sold' }, { 'if-match': ifMatch })
        assertError(res, 'precondition_failed', `pet ${pet.id}`)
        assertNotDeprecated(res)
      }
      assert.deepEqual(await readPet(api, pet.id), { ...pet, name: 'Max' })
    })

    test('When If-Match is stale and the transition is forbidden too, then the precondition is judged first: 412', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3, status: 'sold' })

      const res = await patchPet(api, pet.id, { status: 'available' }, { 'if-match': '"stale"' })

      assertError(res, 'precondition_failed')
    })

    test('When a patch that would change nothing carries a stale tag, then it is 412 all the same', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })

      assertError(await patchPet(api, pet.id, {}, { 'if-match': '"stale"' }), 'precondition_failed')
    })

    test('When 20 PATCHes carrying the same current tag race, then exactly one is 200, nineteen are 412, and the pet is the winner\'s', async (t) => {
      const api = await buildTestApp(t, { store, env: { RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' } })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const tag = String((await getPet(api, pet.id)).headers.etag)

      const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => patchPet(api, pet.id, { name: `Editor ${i}`, status: 'pending' }, { 'if-match': tag })))

      const won = answers.filter((res) => res.statusCode === 200)
      assert.equal(won.length, 1, answers.map((res) => res.statusCode).join(', '))
      for (const res of answers.filter((other) => other !== won[0])) assertError(res, 'precondition_failed')
      assert.deepEqual(await readPet(api, pet.id), won[0]?.json())
    })
  })
}
