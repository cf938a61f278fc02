/** Generators of values valid against a schema, and of request bodies: valid ones and hostile ones of every kind. */
import fc from 'fast-check'
import { stringifyJson } from '../../src/infra/json/exact-json.js'
import type { ApiDescription, ApiOperation, Json, Schema } from './api-description.js'
import { exactInteger } from './catalogue-model.js'
import type { FuzzBody } from './fuzz-request.js'

// characters that stress storage, JSON and length rules; all printable except where noted
const SPECIAL_CHARACTERS = [
  '🐶', '👨‍👩‍👧', '🏳️‍🌈', 'é', 'e\u0301', 'ß', 'İ', '犬', 'مرحبا', '\u200f', '\u200b', '\ufeff', '\u2028', '\u00a0', '\uffff', '\ufffd',
  '"', '\\', "'", '<', '>', '&', '%', '{', '}', '$', ';', '--', '/*', '\u{10ffff}', '\u{e0001}', '𝔘', ' ', 'x'
]
// names that look like SQL, markup or paths: they must be stored and returned as they are
const TRICKY_NAMES = [
  "Robert'); DROP TABLE pets;--", 'SELECT * FROM pets', '<script>alert(1)</script>', '../../etc/passwd', '%00', '$' + '{jndi:x}',
  'null', 'undefined', '__proto__', 'constructor', 'NaN', ' leading and trailing ', 'x'.repeat(100), '🐶'.repeat(100)
]

function textArbitrary (minLength: number, maxLength: number): fc.Arbitrary<string> {
  const max = Math.min(maxLength, 120)
  return fc.oneof(
    fc.string({ unit: 'grapheme-ascii', minLength, maxLength: max }),
    fc.string({ unit: 'grapheme', minLength, maxLength: max }),
    fc.string({ unit: 'binary', minLength, maxLength: max }),
    fc.string({ unit: fc.constantFrom(...SPECIAL_CHARACTERS), minLength, maxLength: max }),
    fc.constantFrom(...TRICKY_NAMES)
  )
}

// where a double stops holding integers exactly, and int64's ends: a bound of int64 fields, and values around them
const INTEGER_EDGES = [0n, 1n, -1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 62n, -(2n ** 62n) - 1n, 2n ** 63n - 2n, -(2n ** 63n) + 1n]

/**
 * Integers within the bounds (bigints allowed: an int64's reach 2^63 − 1), with the bounds themselves,
 * values near 0 and the edges of doubles often; a number when safe, else a bigint.
 */
export function integerArbitrary (minimum: number | bigint, maximum: number | bigint): fc.Arbitrary<number | bigint> {
  const [min, max] = [BigInt(minimum), BigInt(maximum)]
  const within = (value: bigint): bigint => value < min ? min : value > max ? max : value
  return fc.oneof(
    fc.constantFrom(min, max, ...INTEGER_EDGES.map(within)),
    fc.bigInt({ min: within(-1000n), max: within(1000n) }),
    fc.bigInt({ min, max })
  ).map((value) => exactInteger(String(value)))
}

/** Values valid against `schema` (objects, strings, integers, enums of the document); checked with ajv. */
export function validValueArbitrary (api: ApiDescription, pointer: string, schema: Schema): fc.Arbitrary<unknown> {
  return rawValueArbitrary(api, schema).filter((value) => api.validate(pointer, value) === undefined)
}

function rawValueArbitrary (api: ApiDescription, schemaOrRef: Schema): fc.Arbitrary<unknown> {
  const schema = api.resolve(schemaOrRef)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      const required = (schema.required ?? []) as string[]
      const shape = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, rawValueArbitrary(api, property)]))
      return fc.record(shape, { requiredKeys: required.filter((name) => name in properties) })
    }
    case 'string':
      // a pattern random text almost never matches (a date-time) is drawn from the pattern itself; one it usually
      // matches (a name's "no control characters", written with Unicode properties) from text, as any string
      return typeof schema.pattern === 'string' && !schema.pattern.includes('\\p{')
        ? fc.stringMatching(new RegExp(schema.pattern)).filter((text) => text.length <= Number(schema.maxLength ?? Infinity))
        : textArbitrary(Number(schema.minLength ?? 0), Number(schema.maxLength ?? 200))
    case 'integer':
      return integerArbitrary(schema.minimum as number | bigint | undefined ?? Number.MIN_SAFE_INTEGER, schema.maximum as number | bigint | undefined ?? Number.MAX_SAFE_INTEGER)
    case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'boolean': return fc.boolean()
    case 'array': return fc.array(rawValueArbitrary(api, (schema.items ?? {}) as Schema), { maxLength: 3 })
    default: return fc.jsonValue()
  }
}

// JSON texts of the wrong type, out of range, or written in ways a strict API must refuse
const HOSTILE_JSON_VALUES = [
  'null', 'true', 'false', '0', '-1', '1.5', '-0', '1.0', '1e2', '1E400', '-1E400', '9007199254740991', '9007199254740992',
  '9007199254740993', '-9007199254740991', '-9007199254740992', '9223372036854775807', '9223372036854775808', '-9223372036854775808',
  '-9223372036854775809', '1e18', '1E19', '18446744073709551616', '1' + '0'.repeat(400), '0.1', '1.0000000000000001',
  '9007199254740990.6', '2e-1', '"5"', '""', '" "', '"\\u0000"', '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\udc36"', '"\\t"', '"a\\nb"',
  '"🐶"', '[]', '{}', '[1]', '{"a":1}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}',
  '"available"', '"SOLD"', '"Available"', `"${'x'.repeat(101)}"`, `"${'🐶'.repeat(101)}"`, `"${'x'.repeat(5000)}"`
]
// an integer field written at and past its limits, as whole numbers with a fraction or exponent, as fractions that parse to integers, or not as JSON at all
const INTEGER_SPELLINGS = [
  '1.0', '1e2', '1E2', '1e+2', '100e-2', '0e0', '-0.0', '1.0000000000000001', '9007199254740990.6', '9007199254740991.0', '1.5', '-1.5',
  '9007199254740991', '-9007199254740991', '9007199254740992', '-9007199254740992', '9007199254740993', '4294967296', '-1', '0', '-0', '1E400',
  '9223372036854775807', '-9223372036854775808', '9223372036854775808', '-9223372036854775809', '9.223372036854775807e18', '9223372036854775807.0',
  '-9.223372036854775808E+18', '1e18', '1e19', '4611686018427387904.5', '9007199254740993.0', '9007199254740993.5', '18446744073709551616',
  '+1', '.5', '01', '0x10', 'Infinity', 'NaN', '1_000', '--1', '1.', '1e', '١', '"1"'
]
const EXTRA_KEYS = ['id', '__proto__', 'constructor', 'prototype', 'Name', 'name ', 'categoryid', '', 'status\u0000', '🐶', 'toString', 'hasOwnProperty', 'x'.repeat(300)]

function hostileLiteralArbitrary (): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_JSON_VALUES) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.double().map((value) => Number.isFinite(value) ? String(value) : 'null') }
  )
}

interface Entry { key: string, literal: string }

function objectText (entries: Entry[], pretty: boolean): string {
  const parts = entries.map(({ key, literal }) => `${JSON.stringify(key)}:${pretty ? ' ' : ''}${literal}`)
  return pretty ? `{\n  ${parts.join(',\n  ')}\n}` : `{${parts.join(',')}}`
}

const JSON_NUMBER = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/**
 * Whether a JSON number literal denotes a whole number (`1.0`, `1e2`, `100e-2`), worked out by
 * moving the decimal point in the text, so that no rounding by JSON.parse can hide a fraction.
 */
function denotesWholeNumber (literal: string): boolean {
  const match = JSON_NUMBER.exec(literal)
  if (match === null) return false
  let [, whole = '', fraction = ''] = match
  const exponent = Number(match[3] ?? 0)
  if (exponent > 0) {
    whole += fraction.slice(0, exponent).padEnd(exponent, '0')
    fraction = fraction.slice(exponent)
  } else if (exponent < 0) {
    const padded = whole.padStart(-exponent + 1, '0')
    fraction = padded.slice(exponent) + fraction
  }
  return /^0*$/.test(fraction)
}

function nested (depth: number, style: 'array' | 'object', inner: string): string {
  return style === 'array' ? '['.repeat(depth) + inner + ']'.repeat(depth) : '{"a":'.repeat(depth) + inner + '}'.repeat(depth)
}

const NOT_JSON = [
  "{'name':'Rex','categoryId':1}", '{name:"Rex",categoryId:1}', '{"name":"Rex","categoryId":1,}', '{"name":"Rex" "categoryId":1}',
  '{"name":"Rex","categoryId":1} trailing', '{"name":"Rex","categoryId":1}{}', 'undefined', 'NaN', '-', '/* c */ {}',
  '{"name":"Rex",// c\n"categoryId":1}', 'name=Rex&categoryId=1', '<pet><name>Rex</name></pet>', '\u0000', '"unterminated',
  '{"name":"Rex\n","categoryId":1}', '{"name":"\t","categoryId":1}', '{"name":"\\x41","categoryId":1}', '{"name":"\\u12","categoryId":1}',
  '[', '{', ']', '}', ':', ',', '{"a"}', 'nul', 'tru', '{"name":"Rex","categoryId":1', '\ufeff'
]
const INVALID_UTF8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xfe, 0xff]]

/** Request bodies for a JSON body schema: valid ones, and hostile ones of every kind. */
export function bodyArbitrary (api: ApiDescription, operation: ApiOperation): fc.Arbitrary<FuzzBody> {
  const schema = operation.bodySchema ?? {}
  const pointer = operation.bodyPointer ?? ''
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const integerFields = Object.keys(properties).filter((name) => api.resolve(properties[name] as Schema).type === 'integer')
  const validObject = validValueArbitrary(api, pointer, schema) as fc.Arbitrary<Record<string, Json>>
  const structured = (label: string, entries: Entry[], pretty = false): FuzzBody => {
    const wholeIntegers = integerFields.every((field) => {
      const last = entries.filter((entry) => entry.key === field).at(-1)
      return last === undefined || denotesWholeNumber(last.literal)
    })
    // RFC 8259 leaves duplicate names to the parser: a server may keep the last one (as JSON.parse) or refuse the body
    const duplicates = new Set(entries.map((entry) => entry.key)).size !== entries.length
    return { label, text: objectText(entries, pretty), structured: !duplicates, wholeIntegers }
  }
  const entriesOf = (value: Record<string, Json>): Entry[] => Object.entries(value).map(([key, inner]) => ({ key, literal: stringifyJson(inner) }))
  const unstructured = (label: string, text: string): FuzzBody => ({ label, text, structured: false, wholeIntegers: false })
  const fieldNames = Object.keys(properties)

  const fieldName = fc.constantFrom(...(fieldNames.length > 0 ? fieldNames : ['x']))
  const integerField = fc.constantFrom(...(integerFields.length > 0 ? integerFields : fieldNames.length > 0 ? fieldNames : ['x']))
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(validObject, fc.boolean(), fc.boolean()).map(([value, pretty, reversed]) => {
        const entries = entriesOf(value)
        return structured('valid', reversed ? entries.reverse() : entries, pretty)
      })
    },
    {
      weight: 5,
      arbitrary: fc.tuple(validObject, fieldName, hostileLiteralArbitrary()).map(([value, field, literal]) => {
        const entries = entriesOf(value).filter((entry) => entry.key !== field)
        return structured(`field "${field}" replaced`, [...entries, { key: field, literal }])
      })
    },
    {
      weight: 5,
      arbitrary: fc.tuple(validObject, integerField, fc.constantFrom(...INTEGER_SPELLINGS)).map(([value, field, literal]) =>
        structured(`field "${field}" written ${literal}`, [...entriesOf(value).filter((entry) => entry.key !== field), { key: field, literal }]))
    },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fc.nat()).map(([value, index]) => {
        const entries = entriesOf(value)
        const removed = entries.splice(index % Math.max(entries.length, 1), 1)
        return structured(`field "${removed[0]?.key ?? ''}" removed`, entries)
      })
    },
    {
      weight: 3,
      arbitrary: fc.tuple(validObject, fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 10 })), hostileLiteralArbitrary(), fc.nat()).map(([value, key, literal, at]) => {
        const entries = entriesOf(value)
        entries.splice(at % (entries.length + 1), 0, { key, literal })
        return structured(`extra field ${JSON.stringify(key)}`, entries)
      })
    },
    {
      weight: 3,
      arbitrary: fc.tuple(validObject, validObject, fieldName, fc.boolean(), fc.option(hostileLiteralArbitrary())).map(([value, other, field, first, hostile]) => {
        const entries = entriesOf(value)
        const duplicate = { key: field, literal: hostile ?? stringifyJson(other[field] ?? 'dup') }
        return structured(`duplicate key "${field}"`, first ? [duplicate, ...entries] : [...entries, duplicate])
      })
    },
    { weight: 2, arbitrary: hostileLiteralArbitrary().map((literal) => unstructured('not an object', literal)) },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(1, 2, 10, 100, 1000, 2000, 2700, 5000, 8000, 9000), fc.constantFrom<'array' | 'object'>('array', 'object'), fc.option(fieldName)).map(([depth, style, field]) => {
        const deep = nested(depth, style, style === 'array' ? '' : '1')
        return unstructured(`nesting ${depth} deep (${style})${field === null ? '' : ` in "${field}"`}`,
          field === null ? deep : objectText([{ key: field, literal: deep }, ...fieldNames.filter((name) => name !== field).map((name) => ({ key: name, literal: '1' }))], false))
      })
    },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fc.nat()).map(([value, cut]) => {
        const text = stringifyJson(value)
        return unstructured('truncated', text.slice(0, cut % text.length))
      })
    },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...NOT_JSON), fc.string({ unit: 'binary', maxLength: 50 })).map((text) => unstructured('not JSON', text)) },
    { weight: 1, arbitrary: fc.tuple(validObject, fc.constantFrom('\ufeff', ' \n\t\r', '\n')).map(([value, prefix]) => unstructured(`${JSON.stringify(prefix)} around`, prefix + stringifyJson(value) + (prefix === '\ufeff' ? '' : prefix))) },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fieldName, fc.constantFrom(101, 1000, 5000, 5460, 8000, 16300, 16400, 20000), fc.constantFrom('x', 'é', '🐶', '\u4e00', ' ')).map(([value, field, length, character]) =>
        structured(`huge "${field}" (${length} × ${JSON.stringify(character)})`, [...entriesOf(value).filter((entry) => entry.key !== field), { key: field, literal: JSON.stringify(character.repeat(length)) }]))
    },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([value, bad, at]) => {
        const bytes = [...Buffer.from(stringifyJson(value), 'utf8')]
        const position = bytes.indexOf(0x22, 2) + 1 || at % bytes.length
        bytes.splice(position, 0, ...bad)
        return { label: `invalid UTF-8 ${Buffer.from(bad).toString('hex')}`, bytes }
      })
    },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', '\t\r\n').map((text) => unstructured('empty', text)) }
  )
}
