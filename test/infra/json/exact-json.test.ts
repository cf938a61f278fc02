import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Type } from '@sinclair/typebox'
import { buildSerializer } from '../../../src/infra/http/serialization.js'
import { isWholeNumberLiteral, parseJson, stringifyJson, unsafeWholeValue } from '../../../src/infra/json/exact-json.js'
import { compareInt64, int64FromDecimal, isInt64, toInt64, INT64_MAX, INT64_MIN } from '../../../src/infra/json/int64.js'
import { PetSchema, PetStatusSchema } from '../../../src/capabilities/pets/pet-schemas.js'

describe('exact JSON', () => {
  test('When a text holds only numbers a double holds exactly, then parseJson is JSON.parse', () => {
    for (const text of ['{"a":1,"b":[-2.5,1e2,9007199254740991,-9007199254740991],"c":"9007199254740993"}', '[1.0000000000000001, 0.1, -0]', '"1e18"', '1e-400']) {
      assert.deepEqual(parseJson(text), JSON.parse(text), text)
    }
  })

  test('When a whole number is beyond ±(2^53−1), however written, then it is parsed as the exact bigint', () => {
    const cases: Array<[string, bigint]> = [
      ['9007199254740992', 2n ** 53n], ['9007199254740993', 2n ** 53n + 1n], ['-9007199254740993', -(2n ** 53n) - 1n],
      ['9223372036854775807', 2n ** 63n - 1n], ['-9223372036854775808', -(2n ** 63n)], ['18446744073709551616', 2n ** 64n],
      ['1e18', 10n ** 18n], ['1E+18', 10n ** 18n], ['9007199254740993.000', 2n ** 53n + 1n], ['1.5e30', 15n * 10n ** 29n], ['90071992547409930e-1', 2n ** 53n + 1n]
    ]
    for (const [literal, value] of cases) {
      assert.deepEqual(parseJson(`{"n":${literal},"s":"${literal}"}`), { n: value, s: literal }, literal)
      assert.equal(unsafeWholeValue(literal), value)
    }
  })

  test('When a number beyond 2^53 has a fraction or more than a thousand digits, then it is left to JSON.parse', () => {
    assert.deepEqual(parseJson('[9007199254740993.5,1e400,1e999,1e1000,-1e1000]'), [9007199254740994, 10n ** 400n, 10n ** 999n, Infinity, -Infinity])
    // no ten-to-the-billion bigint is made: 10n ** 999999999n is beyond V8's largest BigInt, so making it would
    // throw a RangeError (after some 20 s here) instead of this answer; how quickly it comes is the benchmark's
    // check (TIMING_TARGETS in bench/report.ts)
    assert.deepEqual(parseJson('[1e999999999]'), [Infinity])
    assert.equal(isWholeNumberLiteral('1e999999999'), true)
    assert.equal(isWholeNumberLiteral('1.5'), false)
    assert.equal(isWholeNumberLiteral('150e-2'), false)
    assert.equal(isWholeNumberLiteral('150e-1'), true)
  })

  test('When a long run of zeros stands inside a literal, then its digits are read as a number like any other', () => {
    const literal = `1${'0'.repeat(16_000)}1`
    // that they are read in one pass (no regular expression backtracking over them: quadratic, these two
    // literals took about 200 ms on the 2-core machine) is timed by the benchmark (TIMING_TARGETS in bench/report.ts)
    assert.deepEqual(parseJson(`[${literal},${literal}.5]`), [Infinity, Infinity])
    assert.equal(isWholeNumberLiteral(`${literal}.5`), false)
    assert.equal(isWholeNumberLiteral(literal), true)
  })

  test('When a big number has a leading zero (012…), then it is not JSON: parseJson refuses it as JSON.parse does', () => {
    for (const literal of ['012345678901234567890', '-012345678901234567890', '00.9007199254740993e20']) {
      assert.equal(unsafeWholeValue(literal), undefined, literal)
      assert.throws(() => parseJson(`[${literal}]`), (error: Error) => {
        assert.throws(() => JSON.parse(`[${literal}]`), { message: error.message })
        return true
      }, literal)
    }
  })

  test('When a string looks like the marker of a rewritten number, then it stays a string', () => {
    const forged = '"int64:000000000000000000000000:123"'
    assert.deepEqual(parseJson(`[${forged},9007199254740993]`), [JSON.parse(forged), 2n ** 53n + 1n])
  })

  test('When malformed text holds a big number, then the error is JSON.parse\'s for the text as sent', () => {
    const text = '{"a":9007199254740993,}'
    assert.throws(() => parseJson(text), (error: Error) => {
      assert.throws(() => JSON.parse(text), { message: error.message })
      return true
    })
  })

  test('When a value holds bigints, then stringifyJson writes them digit for digit, and anything else as JSON.stringify does', () => {
    assert.equal(stringifyJson({ a: 2n ** 63n - 1n, b: [-(2n ** 63n), 1], c: 'x' }), '{"a":9223372036854775807,"b":[-9223372036854775808,1],"c":"x"}')
    assert.equal(stringifyJson({ a: 1n }, 2), '{\n  "a": 1\n}')
    const plain = { a: 1, b: 'int64:x:1', c: [null, true] }
    assert.equal(stringifyJson(plain), JSON.stringify(plain))
    const cycle: Record<string, unknown> = { n: 1n }
    cycle.self = cycle
    assert.throws(() => stringifyJson(cycle), TypeError)
    for (const value of [2n ** 53n + 1n, -(2n ** 63n), 2n ** 64n]) assert.deepEqual(parseJson(stringifyJson({ value })), { value })
  })
})

describe('Int64', () => {
  test('When a value is made an Int64, then it is a number exactly when it is a safe integer', () => {
    assert.equal(toInt64(5n), 5)
    assert.equal(toInt64(BigInt(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER)
    assert.equal(toInt64(2n ** 53n), 2n ** 53n)
    assert.equal(int64FromDecimal('007'), 7)
    assert.equal(int64FromDecimal('-9223372036854775808'), INT64_MIN)
    assert.equal(int64FromDecimal('9223372036854775808'), INT64_MAX + 1n)
    assert.deepEqual([isInt64(1), isInt64(1.5), isInt64(2n), isInt64(2n ** 53n), isInt64(INT64_MAX + 1n)], [true, false, false, true, false])
    assert.deepEqual([2n ** 62n, 1, -(2n ** 63n), -1].sort(compareInt64), [-(2n ** 63n), -1, 1, 2n ** 62n])
  })

  test('When a Pet holds an int64 beyond 2^53, then the response serializer (fast-json-stringify) writes it digit for digit', () => {
    const serialize = buildSerializer({ PetStatus: PetStatusSchema, Pet: PetSchema }, {})({ schema: Type.Ref(PetSchema), method: 'GET', url: '/pets/:petId', httpStatus: '200' })
    for (const categoryId of [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, 7]) {
      assert.equal(serialize({ id: 1, name: 'Rex', categoryId, status: 'sold' }), `{"id":1,"name":"Rex","categoryId":${categoryId},"status":"sold"}`)
    }
  })
})
