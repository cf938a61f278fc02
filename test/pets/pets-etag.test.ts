import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { buildTestApp, postPet, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'

async function createPet (api: TestApp, body: Record<string, unknown>): Promise<Pet> {
  const res = await postPet(api, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function getPet (api: TestApp, petId: number, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<LightMyRequestResponse> {
  return api.app.inject({ method, url: `/v1/pets/${petId}`, headers: { ...api.auth, ...headers } })
}

/** A pet in a fresh app, and the ETag of its first 200. */
async function petWithEtag (t: TestContext, store: StoreKind): Promise<{ api: TestApp, pet: Pet, etag: string }> {
  const api = await buildTestApp(t, { store })
  const pet = await createPet(api, { name: 'Rex', categoryId: 3, status: 'pending' })
  const res = await getPet(api, pet.id)
  assert.equal(res.statusCode, 200, res.body)
  const etag = res.headers.etag
  assert.equal(typeof etag, 'string')
  return { api, pet, etag: etag as string }
}

function assertNotModified (res: LightMyRequestResponse, etag: string): void {
  assert.equal(res.statusCode, 304, res.body)
  assert.equal(res.body, '')
  assert.equal(res.headers.etag, etag)
  assert.equal(res.headers.deprecation, '@1795219200')
  assert.equal(res.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT')
  assert.match(String(res.headers.link), /rel="successor-version"/)
  assert.equal(res.headers['content-type'], undefined)
  // RFC 9110 §8.6: no Content-Length on a 304 to GET (only the 200's length would be allowed)
  assert.equal(res.headers['content-length'], undefined)
  assert.equal(res.headers['cache-control'], 'private, no-cache')
}

for (const store of testStores()) {
  describe(`getPet ETag and If-None-Match (${store})`, () => {
    test('When getPet answers 200, then it carries a strong ETag and "private, no-cache"', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)
      const res = await getPet(api, pet.id)

      assert.equal(res.headers['cache-control'], 'private, no-cache')
      assert.match(etag, /^"[^"]+"$/)
      assert.ok(!etag.startsWith('W/'))
    })

    test('When the same pet is read twice, then both answers carry the same ETag', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const again = await getPet(api, pet.id)

      assert.equal(again.statusCode, 200, again.body)
      assert.deepEqual(again.json(), pet)
      assert.equal(again.headers.etag, etag)
    })

    test('When two different pets are read, then their ETags differ', async (t) => {
      const { api, etag } = await petWithEtag(t, store)
      // the same fields but another id: another representation
      const twin = await createPet(api, { name: 'Rex', categoryId: 3, status: 'pending' })

      const res = await getPet(api, twin.id)

      assert.equal(res.statusCode, 200, res.body)
      assert.match(String(res.headers.etag), /^"[^"]+"$/)
      assert.notEqual(res.headers.etag, etag)
    })

    test('When If-None-Match carries the current tag, then the answer is 304 with no body, still with Deprecation, Sunset and ETag, and no content type', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await getPet(api, pet.id, { 'if-none-match': etag })

      assertNotModified(res, etag)
    })

    test('When If-None-Match carries the tag with a W/ prefix, then the weak comparison matches: 304', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await getPet(api, pet.id, { 'if-none-match': `W/${etag}` })

      assertNotModified(res, etag)
    })

    test('When If-None-Match lists the tag after another one, then the answer is 304', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await getPet(api, pet.id, { 'if-none-match': `"x", ${etag}` })

      assertNotModified(res, etag)
    })

    test('When If-None-Match is *, then the answer is 304', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await getPet(api, pet.id, { 'if-none-match': '*' })

      assertNotModified(res, etag)
    })

    test('When If-None-Match carries tags that do not match, then the answer is the full 200', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      for (const header of ['"not-the-tag"', '"x", W/"y"', etag.slice(0, -2) + '"', etag.slice(1, -1)]) {
        const res = await getPet(api, pet.id, { 'if-none-match': header })
        assert.equal(res.statusCode, 200, `If-None-Match: ${header}`)
        assert.deepEqual(res.json(), pet)
        assert.equal(res.headers.etag, etag)
        assert.match(String(res.headers['content-type']), /^application\/json/)
      }
    })

    test('When the tag of another pet is sent, then the answer is that pet, 200', async (t) => {
      const { api, etag } = await petWithEtag(t, store)
      const other = await createPet(api, { name: 'Tom', categoryId: 1 })

      const res = await getPet(api, other.id, { 'if-none-match': etag })

      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), other)
    })

    test('When HEAD carries the current tag, then it is also 304', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await getPet(api, pet.id, { 'if-none-match': etag }, 'HEAD')

      assert.equal(res.statusCode, 304)
      assert.equal(res.body, '')
      assert.equal(res.headers.etag, etag)
      // a HEAD 304 may carry the length of the 200 it stands for, never anything else
      const full = await getPet(api, pet.id)
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(full.body)))
    })

    test('When no pet has the id, then the 404 carries no ETag, even with If-None-Match: *', async (t) => {
      const { api, pet } = await petWithEtag(t, store)

      const plain = await getPet(api, pet.id + 1)
      const star = await getPet(api, pet.id + 1, { 'if-none-match': '*' })

      for (const res of [plain, star]) {
        assertError(res, 'pet_not_found')
        assert.equal(res.headers.etag, undefined)
        assert.equal(res.headers['cache-control'], 'no-store')
      }
    })

    test('When If-None-Match comes without a key, then authentication comes first: 401, no ETag', async (t) => {
      const { api, pet, etag } = await petWithEtag(t, store)

      const res = await api.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: { 'if-none-match': etag } })

      assertError(res, 'unauthorized')
      assert.equal(res.headers.etag, undefined)
    })
  })
}
