import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { buildTestApp, postPet, testStores, type TestApp, type TestAppOptions } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'

const PUBLIC_BASE_URL = 'https://api.example.com/v1'
const STAGING_BASE_URL = 'https://staging.example.com/v1'
const BASE_URLS = { PUBLIC_BASE_URL, STAGING_BASE_URL }

const SUNSET_MS = Date.parse('2030-12-05T00:00:00Z')

// each case: a petId that is not a positive integer JavaScript holds exactly, and what it shows
const INVALID_IDS: Array<[string, string]> = [
  ['0x1', 'hexadecimal'],
  ['1e0', 'an exponent'],
  ['1.0', 'a decimal point'],
  ['%201', 'a leading blank'],
  ['+1', 'a plus sign'],
  ['1'.repeat(200), 'two hundred digits'],
  ['abc', 'not a number'],
  ['1.5', 'a fraction'],
  ['0', 'zero'],
  ['-1', 'negative'],
  ['9223372036854775808', 'beyond 2^63-1'],
  ['99999999999999999999', 'beyond int64']
]

/** Builds the app with known base URLs, so the successor link can be checked exactly. */
async function buildApi (t: Parameters<typeof buildTestApp>[0], options: TestAppOptions = {}): Promise<TestApp> {
  return buildTestApp(t, { ...options, env: { ...BASE_URLS, ...options.env } })
}

async function createPet (api: TestApp, body: Record<string, unknown>): Promise<Pet> {
  const res = await postPet(api, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function getPet (api: TestApp, petId: string | number, headers: Record<string, string> = api.auth): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'GET', url: `/v1/pets/${petId}`, headers })
}

/** Asserts the RFC 9745 / RFC 8594 / RFC 8288 headers every answer of the deprecated operation carries. */
function assertDeprecationHeaders (res: LightMyRequestResponse, base: string = PUBLIC_BASE_URL): void {
  assert.equal(res.headers.deprecation, '@1795219200')
  assert.equal(res.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT')
  assert.equal(res.headers.link, `<${base}/pets>; rel="successor-version"`)
}

for (const store of testStores()) {
  describe(`GET /v1/pets/{petId} (${store})`, () => {
    test('When the pet exists, then it is returned exactly as created, with the deprecation headers', async (t) => {
      const api = await buildApi(t, { store })
      await createPet(api, { name: 'Other', categoryId: 9 })
      const created = await createPet(api, { name: 'Rex', categoryId: 3, status: 'pending' })

      const res = await getPet(api, created.id)

      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      assert.deepEqual(res.json(), created)
      assert.deepEqual(res.json(), { id: created.id, name: 'Rex', categoryId: 3, status: 'pending' })
      assertDeprecationHeaders(res)
    })

    test('When the pet was created without status, then it is returned as available', async (t) => {
      const api = await buildApi(t, { store })
      const created = await createPet(api, { name: 'Tom', categoryId: 1 })

      const res = await getPet(api, created.id)

      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { id: created.id, name: 'Tom', categoryId: 1, status: 'available' })
    })

    test('When no pet has the id, then the answer is 404 pet_not_found with the deprecation headers', async (t) => {
      const api = await buildApi(t, { store })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id + 1)

      assertError(res, 'pet_not_found')
      assertDeprecationHeaders(res)
    })

    test('When many pets, some missing and some asked twice, are fetched at once, then each answer is its own pet or 404', async (t) => {
      const api = await buildApi(t, { store })
      const pets: Pet[] = []
      for (let i = 0; i < 12; i++) pets.push(await createPet(api, { name: `Pet ${i}`, categoryId: i }))
      const last = pets.at(-1)?.id ?? 0
      const ids = [...pets.map((pet) => pet.id), last + 1, pets[3]?.id ?? 0, last + 2, pets[0]?.id ?? 0]

      const answers = await Promise.all(ids.map(async (id) => await getPet(api, id)))

      answers.forEach((res, index) => {
        const pet = pets.find((candidate) => candidate.id === ids[index])
        if (pet === undefined) assertError(res, 'pet_not_found')
        else assert.deepEqual(res.json(), pet)
      })
    })

    for (const [petId, what] of INVALID_IDS) {
      test(`When petId is ${what} (${petId}), then the answer is 400 invalid_request naming "petId" with the deprecation headers`, async (t) => {
        const api = await buildApi(t, { store })
        await createPet(api, { name: 'Rex', categoryId: 3 })

        const res = await getPet(api, petId)

        assertError(res, 'invalid_request', 'petId')
        assertDeprecationHeaders(res)
      })
    }

    test('When no API key is sent, then the answer is 401 with the deprecation headers, even for an existing pet', async (t) => {
      const api = await buildApi(t, { store })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id, {})

      assertError(res, 'unauthorized')
      assert.match(String(res.headers['www-authenticate']), /^Bearer\b/)
      assertDeprecationHeaders(res)
    })

    test('When the request comes through the staging host, then the successor link points at the staging base URL', async (t) => {
      const api = await buildApi(t, { store })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id, { ...api.auth, host: 'staging.example.com' })

      assert.equal(res.statusCode, 200)
      assertDeprecationHeaders(res, STAGING_BASE_URL)
    })

    test('When the sunset instant has come, then an existing pet answers 410 gone with the deprecation headers', async (t) => {
      const api = await buildApi(t, { store, clock: { now: () => SUNSET_MS } })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id)

      assertError(res, 'gone')
      assertDeprecationHeaders(res)
    })

    test('When the sunset instant has come, then an unknown or malformed id also answers 410 gone', async (t) => {
      const api = await buildApi(t, { store, clock: { now: () => SUNSET_MS } })

      const unknown = await getPet(api, 12345)
      const malformed = await getPet(api, 'abc')

      assertError(unknown, 'gone')
      assertDeprecationHeaders(unknown)
      assertError(malformed, 'gone')
      assertDeprecationHeaders(malformed)
    })

    test('When the sunset has passed long ago, then the answer is still 410 gone', async (t) => {
      const api = await buildApi(t, { store, clock: { now: () => Date.parse('2031-06-01T12:00:00Z') } })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id)

      assertError(res, 'gone')
      assertDeprecationHeaders(res)
    })

    test('When it is one millisecond before the sunset, then an existing pet still answers 200', async (t) => {
      const api = await buildApi(t, { store, clock: { now: () => SUNSET_MS - 1 } })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await getPet(api, created.id)

      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), created)
      assertDeprecationHeaders(res)
    })

    test('When HEAD is sent for an existing pet, then it answers 200 without a body', async (t) => {
      const api = await buildApi(t, { store })
      const created = await createPet(api, { name: 'Rex', categoryId: 3 })

      const res = await api.app.inject({ method: 'HEAD', url: `/v1/pets/${created.id}`, headers: api.auth })

      assert.equal(res.statusCode, 200)
      assert.equal(res.body, '')
      assertDeprecationHeaders(res)
    })
  })
}
