import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, listAllPets, postPet, testStores } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'

// each case: a body that must be refused, and the word its message must name
const INVALID_BODIES: Array<[string, unknown, string]> = [
  ['name is missing', { categoryId: 1 }, 'name'],
  ['categoryId is missing', { name: 'Rex' }, 'categoryId'],
  ['name is empty', { name: '', categoryId: 1 }, 'name'],
  ['name is only blanks', { name: '  \t ', categoryId: 1 }, 'name'],
  ['name is longer than 100 characters', { name: 'x'.repeat(101), categoryId: 1 }, 'name'],
  ['name is a number', { name: 5, categoryId: 1 }, 'name'],
  ['name is null', { name: null, categoryId: 1 }, 'name'],
  ['categoryId is a numeric string', { name: 'Rex', categoryId: '5' }, 'categoryId'],
  ['categoryId is a fraction', { name: 'Rex', categoryId: 1.5 }, 'categoryId'],
  ['categoryId is a boolean', { name: 'Rex', categoryId: true }, 'categoryId'],
  ['status is not in the enum', { name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
  ['status is null', { name: 'Rex', categoryId: 1, status: null }, 'status'],
  ['status has the wrong case', { name: 'Rex', categoryId: 1, status: 'Available' }, 'status'],
  ['the client supplies an id', { id: 7, name: 'Rex', categoryId: 1 }, 'id'],
  ['an unknown field is present', { name: 'Rex', categoryId: 1, colour: 'brown' }, 'colour'],
  ['the body is an array', [{ name: 'Rex', categoryId: 1 }], 'body'],
  ['the body is a string', 'Rex', 'body'],
  ['the body is null', null, 'body']
]

for (const store of testStores()) {
  describe(`POST /v1/pets (${store})`, () => {
    test('When a valid pet is posted, then it is created with 201, its id and a Location', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postPet(app, { name: 'Rex', categoryId: 3, status: 'pending' })

      assert.equal(res.statusCode, 201)
      const pet = res.json()
      assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 3, status: 'pending' })
      assert.ok(Number.isSafeInteger(pet.id) && pet.id >= 1)
      assert.equal(res.headers.location, `/v1/pets/${pet.id}`)
      const read = await app.app.inject({ method: 'GET', url: res.headers.location, headers: app.auth })
      assert.deepEqual(read.json(), pet)
    })

    test('When a pet is created without status, then it is available', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postPet(app, { name: 'Rex', categoryId: 1 })

      assert.equal(res.statusCode, 201)
      assert.equal(res.json().status, 'available')
      const listed = await app.app.inject({ method: 'GET', url: '/v1/pets?status=available', headers: app.auth })
      assert.deepEqual(listed.json().map((p: { id: number }) => p.id), [res.json().id])
    })

    test('When values sit exactly on the limits, then they are accepted and returned unchanged', async (t) => {
      const app = await buildTestApp(t, { store })
      const bodies = [
        { name: 'x'.repeat(100), categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' },
        { name: '🐕'.repeat(100), categoryId: -Number.MAX_SAFE_INTEGER, status: 'available' },
        { name: ' Ünïcødé name ', categoryId: 0, status: 'pending' }
      ]

      for (const body of bodies) {
        const res = await postPet(app, body)
        assert.equal(res.statusCode, 201, res.body)
        assert.deepEqual(res.json(), { id: res.json().id, ...body })
      }
    })

    for (const [problem, body, field] of INVALID_BODIES) {
      test(`When ${problem}, then 400 names "${field}" and nothing is created`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await postPet(app, body)

        assertError(res, 'invalid_request', field)
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    test('When categoryId is beyond int64 in the JSON text, then it is refused, never rounded', async (t) => {
      const app = await buildTestApp(t, { store })
      for (const literal of ['9223372036854775808', '-9223372036854775809', '18446744073709551616', '1e300']) {
        const res = await app.app.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...app.auth, 'content-type': 'application/json' },
          payload: `{"name":"Rex","categoryId":${literal}}`
        })
        assertError(res, 'invalid_request', 'categoryId')
      }
      assert.deepEqual(await listAllPets(app), [])
    })

    const rawBodies: Array<[string, string, string, 'invalid_request' | 'malformed_json']> = [
      ['the JSON is cut off', '{"name":"Rex",', 'JSON', 'malformed_json'],
      ['the JSON has a trailing comma', '{"name":"Rex","categoryId":1,}', 'JSON', 'malformed_json'],
      ['the body is empty', '', 'empty', 'invalid_request'],
      ['the body has a __proto__ key', '{"__proto__":{"admin":true},"name":"Rex","categoryId":1}', '__proto__', 'invalid_request'],
      ['the body has a constructor.prototype key', '{"constructor":{"prototype":{"admin":true}},"name":"Rex","categoryId":1}', 'constructor', 'invalid_request']
    ]
    for (const [problem, payload, mention, code] of rawBodies) {
      test(`When ${problem}, then 400 ${code} and nothing is created`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload })

        assertError(res, code, mention)
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    test('When the body is deeply nested JSON, then it is refused with 400 and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })
      const payload = `{"name":"Rex","categoryId":1,"extra":${'['.repeat(5000)}${']'.repeat(5000)}}`

      const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload })

      assertError(res, 'invalid_request', 'extra')
      assert.deepEqual(await listAllPets(app), [])
    })

    test('When a duplicate key is sent, then the last value counts, as in JSON.parse', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload: '{"name":"A","name":"B","categoryId":1}' })

      assert.equal(res.statusCode, 201)
      assert.equal(res.json().name, 'B')
    })

    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      test(`When the content type is ${contentType}, then 415 and nothing is created`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': contentType }, payload: '{"name":"Rex","categoryId":1}' })

        assertError(res, 'unsupported_media_type')
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    test('When the content type carries a charset, then the JSON body is accepted', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json; charset=utf-8' }, payload: '{"name":"Rex","categoryId":1}' })

      assert.equal(res.statusCode, 201)
    })

    test('When the body is over 16 KiB, then 413 and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postPet(app, { name: 'Rex', categoryId: 1, padding: 'x'.repeat(16 * 1024) })

      assertError(res, 'payload_too_large', '16384')
      assert.deepEqual(await listAllPets(app), [])
    })

    test('When 200 pets are created concurrently, then they get 200 distinct ids, each readable', async (t) => {
      const app = await buildTestApp(t, { store })

      const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => postPet(app, { name: `pet ${i}`, categoryId: i })))

      assert.ok(responses.every((res) => res.statusCode === 201))
      const created = responses.map((res) => res.json())
      assert.equal(new Set(created.map((pet) => pet.id)).size, 200)
      for (const pet of created) {
        const read = await app.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: app.auth })
        assert.deepEqual(read.json(), pet)
      }
    })
  })
}

for (const store of testStores()) {
  describe(`POST /v1/pets refuses what JSON.parse would bend (${store})`, () => {
    for (const literal of ['1.0000000000000001', '9007199254740990.6', '1.5e0', '15e-1']) {
      test(`When categoryId is written ${literal}, then 400 names categoryId instead of rounding`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload: `{"name":"Rex","categoryId":${literal}}` })

        assertError(res, 'invalid_request', '"categoryId"')
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    test('When a string value merely contains digits with a dot, then it is not mistaken for a number', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postPet(app, { name: 'Rex 1.0 "e2" \\ 3.5', categoryId: 4 })

      assert.equal(res.statusCode, 201)
      assert.equal(res.json().name, 'Rex 1.0 "e2" \\ 3.5')
    })

    for (const [problem, name] of [['a control character', 'Re\u0000x'], ['a newline', 'Rex\n'], ['an unpaired surrogate', 'Rex\ud800'], ['only unpaired surrogates', '\ud800\udbff']]) {
      test(`When the name has ${problem}, then 400 names "name"`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await postPet(app, { name, categoryId: 1 })

        assertError(res, 'invalid_request', '"name"')
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    test('When the body is not valid UTF-8, then 400 malformed_json and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })
      const payload = Buffer.concat([Buffer.from('{"name":"R'), Buffer.from([0xe9]), Buffer.from('x","categoryId":1}')])

      const res = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, 'content-type': 'application/json' }, payload })

      assertError(res, 'malformed_json', 'UTF-8')
      assert.deepEqual(await listAllPets(app), [])
    })
  })
}

for (const store of testStores()) {
  describe(`POST /v1/pets refuses invisible and misleading names (${store})`, () => {
    // blank: only Unicode White_Space or Default_Ignorable_Code_Point characters
    const blank: Array<[string, string]> = [
      ['only U+200B (zero width space)', '\u200b'], ['only U+FEFF', '\ufeff'], ['only U+2060 (word joiner)', '\u2060'],
      ['only NBSP', '\u00a0'], ['only a soft hyphen', '\u00ad'], ['only U+3164 (Hangul filler)', '\u3164'],
      ['a mix of spaces and zero-width characters', ' \u200b\u00a0\u2060\u3000 ']
    ]
    // bidirectional controls make a name display as something else
    const misleading: Array<[string, string]> = [
      ['U+202E (right-to-left override)', 'Rex\u202egod'], ['U+202A (left-to-right embedding)', '\u202aRex'], ['U+2066 (left-to-right isolate)', 'Rex\u2066x\u2069'],
      ['U+2069 (pop directional isolate)', 'Rex\u2069'], ['U+200F (right-to-left mark)', 'Rex\u200f']
    ]
    for (const [problem, name] of [...blank, ...misleading]) {
      test(`When the name is ${blank.some(([p]) => p === problem) ? '' : 'made with '}${problem}, then 400 names "name" and nothing is created`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await postPet(app, { name, categoryId: 1 })

        assertError(res, 'invalid_request', 'field "name" must be text with at least one visible character')
        assert.deepEqual(await listAllPets(app), [])
      })
    }

    for (const name of ['Zoë 🐶', 'Mr\u00a0Rex', 'Rex\u200bRex', 'שלום', 'مرحبا', '\u00a0Rex\u00a0']) {
      test(`When the name is ${JSON.stringify(name)}, then it has a visible character and is accepted as sent`, async (t) => {
        const app = await buildTestApp(t, { store })

        const res = await postPet(app, { name, categoryId: 1 })

        assert.equal(res.statusCode, 201, res.body)
        assert.equal(res.json().name, name)
      })
    }
  })
}
