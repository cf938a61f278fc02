import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'

async function post (api: TestApp, payload: string, contentType = 'application/json') {
  return api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': contentType }, payload })
}

async function petCount (api: TestApp): Promise<number> {
  return (await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })).json().length
}

for (const store of testStores()) {
  describe(`createPet: number literals and charsets (${store})`, () => {
  // each case: a body with a fraction or exponent somewhere, and what the 400 must name
    const cases: Array<[string, string]> = [
      ['{"name":"Rex","categoryId":1,"status":1.0}', 'field "status" must be a string'],
      ['{"name":1.0,"categoryId":1}', 'field "name" must be a string'],
      ['{"name":"Rex","categoryId":1,"extra":1.0}', 'field "extra" is not allowed'],
      ['{"name":"Rex","categoryId":1.5}', 'field "categoryId" must be an integer'],
      ['{"name":"Rex","categoryId":1e400}', 'field "categoryId" must be <= 9223372036854775807'],
      ['{"name":"Rex","categoryId":-1e19}', 'field "categoryId" must be >= -9223372036854775808'],
      ['{"name":"Rex","categoryId":4611686018427387904.5}', 'field "categoryId" must be an integer, got 4611686018427387904.5, which has a fractional part'],
      ['{"name":"Rex","categoryId":1.0000000000000001}', 'field "categoryId" must be an integer, got 1.0000000000000001, which has a fractional part'],
      ['{"name":"Rex","categoryId":"1"}', 'field "categoryId" must be an integer'],
      ['{"name":"Rex","categoryId":true}', 'field "categoryId" must be an integer']
    ]
    for (const [body, message] of cases) {
      test(`When the body is ${body}, then the 400 names the real problem: ${message}`, async (t) => {
        const api = await buildTestApp(t, { store })

        assertError(await post(api, body), 'invalid_request', message)
        assert.equal(await petCount(api), 0)
      })
    }

    // JSON Schema's integer is any number with a zero fractional part, however it is written
    const wholeNumbers: Array<[string, number]> = [['1.0', 1], ['1e2', 100], ['2E0', 2], ['1.50e1', 15], ['-3.000', -3], ['9.007199254740991e15', Number.MAX_SAFE_INTEGER], ['0.0e5', 0]]
    for (const [literal, value] of wholeNumbers) {
      test(`When categoryId is written ${literal}, then it is the integer ${value}`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await post(api, `{"name":"Rex","categoryId":${literal}}`)

        assert.equal(res.statusCode, 201, res.body)
        assert.equal(res.json().categoryId, value)
        assert.match(res.body, new RegExp(`"categoryId":${value}[,}]`))
      })
    }

    test('When a body declares a charset other than UTF-8, then it is 415 and nothing is created; UTF-8 in any spelling is accepted', async (t) => {
      const api = await buildTestApp(t, { store })
      const body = '{"name":"Rex","categoryId":1}'

      assertError(await post(api, body, 'application/json; charset=utf-16'), 'unsupported_media_type', 'charset=utf-16')
      assertError(await post(api, body, 'application/json; charset="latin1"'), 'unsupported_media_type', 'charset=latin1')
      assert.equal(await petCount(api), 0)
      assert.equal((await post(api, body, 'application/json; charset=UTF-8')).statusCode, 201)
      assert.equal((await post(api, body, 'application/json;charset=utf8')).statusCode, 201)
    })
  })
}
