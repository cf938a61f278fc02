/** Generators of parameters and whole requests for every operation of the document. */
import fc from 'fast-check'
import type { ApiDescription, ApiOperation, ParameterObject } from './api-description.js'
import { bodyArbitrary, integerArbitrary } from './body-generators.js'
import { withToString, type FuzzBody, type FuzzParam, type FuzzRequest, type ParamValue } from './fuzz-request.js'
import { authorizationArbitrary, contentTypeArbitrary, JSON_CONTENT_TYPES, LATIN1 } from './header-generators.js'

const IDEMPOTENCY_KEYS = ['k-1', 'k-2', 'k-3', '"k-1"', '"k-2"', '8e03978e-40d5-43e8-bc93-6894a57f9324']
const HOSTILE_IDEMPOTENCY_KEYS = ['', ' ', 'a b', '"', '""', '"a', 'a"b', 'a\\b', 'x'.repeat(255), 'x'.repeat(256), '"' + 'x'.repeat(255) + '"', 'ключ', '\u00e9', '\t', 'k-1, k-2']
const IF_NONE_MATCH = ['*', ' * ', 'W/"x"', '"x"', '', ',', 'W/', '"a", "b"', '"a", *', '*, "a"', 'x', '"' + 'a'.repeat(500) + '"']
const IF_MATCH = [...IF_NONE_MATCH, ', "x",', '"a" "b"', '**', '"x"\t,\t"y"', '"\u00e9"']
const STRING_VALUES = ['', ' ', 'x', '\u0000', '🐶', '%', '../', '\\', '"', 'null', '[]', '{}', '?', '&', '=', '#', '+', 'a+b', 'x'.repeat(600)]
const RAW_URL_TEXT = ['%', '%ZZ', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%%', '%2', '%G1']
const JUNK_QUERY_NAMES = ['LIMIT', 'Status', 'limit[]', 'cursor ', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'api_key', 'access_token', '', '🐶', 'x'.repeat(2000), 'a[b][c]', 'limit.x']

function integerParameterTexts (minimum: bigint, maximum: bigint): fc.Arbitrary<string> {
  const valid = integerArbitrary(minimum, maximum).map(String)
  // at and past the bounds and the edges of doubles and of int64 (which of them are valid depends on the schema)
  const invalid = fc.constantFrom(
    String(minimum - 1n), String(maximum + 1n), '0', '-1', '-0', String(2n ** 53n), String(2n ** 53n + 2n), '9223372036854775807', '9223372036854775808',
    '-9223372036854775809', '18446744073709551616', '1.5', '2.0', '1e1', '0x2', '+2', ' 2', '2 ',
    '', 'abc', 'null', 'true', '١', '２', '9'.repeat(200), '1'.repeat(1001), '🐶', 'NaN', 'Infinity', '[]', '1,2', '\u0000', '1\u0000', '-', '0b1'
  )
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: valid.map((text) => `00${text}`) },
    { weight: 4, arbitrary: invalid }
  )
}

function enumParameterTexts (values: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...values) },
    { weight: 2, arbitrary: fc.constantFrom(...values).chain((value) => fc.constantFrom(value.toUpperCase(), ` ${value}`, `${value} `, value.slice(1), `${value}\u0000`, `["${value}"]`, value.replace('a', '\u0430'))) },
    { weight: 1, arbitrary: fc.constantFrom(...STRING_VALUES) }
  )
}

function parameterValueArbitrary (api: ApiDescription, parameter: ParameterObject): fc.Arbitrary<ParamValue> {
  const schema = api.resolve(parameter.schema ?? {})
  const text = (arbitrary: fc.Arbitrary<string>): fc.Arbitrary<ParamValue> => arbitrary.map((value) => ({ kind: 'text', text: value }))
  const raw = fc.constantFrom(...RAW_URL_TEXT).map((value): ParamValue => ({ kind: 'raw', text: value }))
  const name = parameter.name.toLowerCase()
  if (parameter.in === 'header') {
    if (name === 'idempotency-key') {
      return text(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...IDEMPOTENCY_KEYS) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_IDEMPOTENCY_KEYS) }))
    }
    if (name === 'if-none-match' || name === 'if-match') {
      return fc.oneof(
        text(fc.constantFrom(...(name === 'if-match' ? IF_MATCH : IF_NONE_MATCH))),
        fc.record({ of: fc.constantFrom<'target' | 'other'>('target', 'other'), weak: fc.boolean() }).map(({ of, weak }): ParamValue => ({ kind: 'etag', of, weak }))
      )
    }
    return text(fc.string({ unit: fc.constantFrom(...LATIN1), maxLength: 40 }))
  }
  if (schema.type === 'integer') {
    const valueArbitrary = text(integerParameterTexts(BigInt(schema.minimum as number | bigint | undefined ?? -(2 ** 31)), BigInt(schema.maximum as number | bigint | undefined ?? 2 ** 31)))
    if (parameter.in !== 'path') return fc.oneof({ weight: 8, arbitrary: valueArbitrary }, { weight: 1, arbitrary: raw })
    return fc.oneof(
      { weight: 6, arbitrary: fc.nat().map((index): ParamValue => ({ kind: 'pet', index })) },
      { weight: 8, arbitrary: valueArbitrary },
      { weight: 1, arbitrary: raw }
    )
  }
  if (Array.isArray(schema.enum)) {
    return fc.oneof({ weight: 8, arbitrary: text(enumParameterTexts(schema.enum.map(String))) }, { weight: 1, arbitrary: raw })
  }
  const length = fc.constantFrom(Number(schema.minLength ?? 0), Number(schema.maxLength ?? 100), Number(schema.maxLength ?? 100) + 1)
  const strings = fc.oneof(fc.constantFrom(...STRING_VALUES), length.map((n) => 'x'.repeat(n)), fc.string({ unit: 'binary', maxLength: 30 }))
  if (name === 'cursor') {
    return fc.oneof(
      { weight: 6, arbitrary: fc.record({ status: fc.option(fc.constantFrom('available', 'pending', 'sold'), { nil: undefined }), tamper: fc.constantFrom<'none' | 'flip' | 'suffix'>('none', 'none', 'flip', 'suffix') }).map(({ status, tamper }): ParamValue => ({ kind: 'cursor', status, tamper })) },
      { weight: 3, arbitrary: text(strings) },
      { weight: 1, arbitrary: raw }
    )
  }
  return fc.oneof({ weight: 8, arbitrary: text(strings) }, { weight: 1, arbitrary: raw })
}

function paramsArbitrary (api: ApiDescription, operation: ApiOperation): fc.Arbitrary<FuzzParam[]> {
  const perParameter = operation.parameters.filter((parameter) => ['path', 'query', 'header'].includes(parameter.in)).map((parameter) => {
    const value = parameterValueArbitrary(api, parameter)
    const one = value.map((v) => [{ in: parameter.in, name: parameter.name, value: v }])
    if (parameter.in === 'path' || parameter.required === true) return one
    const none = fc.constant([] as FuzzParam[])
    if (parameter.in === 'header') return fc.oneof({ weight: 2, arbitrary: none }, { weight: 3, arbitrary: one })
    const repeated = fc.tuple(value, value).map(([a, b]) => [{ in: parameter.in, name: parameter.name, value: a }, { in: parameter.in, name: parameter.name, value: b }])
    return fc.oneof({ weight: 3, arbitrary: none }, { weight: 5, arbitrary: one }, { weight: 1, arbitrary: repeated })
  })
  const junk = fc.array(fc.tuple(fc.constantFrom(...JUNK_QUERY_NAMES), fc.oneof(fc.constantFrom(...STRING_VALUES), fc.constantFrom(...RAW_URL_TEXT)))
    .map(([name, value]): FuzzParam => ({ in: 'query', name, value: RAW_URL_TEXT.includes(value) ? { kind: 'raw', text: value } : { kind: 'text', text: value } })), { maxLength: 2 })
  return fc.tuple(fc.tuple(...perParameter), fc.oneof({ weight: 4, arbitrary: fc.constant([] as FuzzParam[]) }, { weight: 1, arbitrary: junk }))
    .map(([lists, extra]) => [...lists.flat(), ...extra])
}

const EXTRA_HEADERS: Array<[string, string]> = [
  ['x-request-id', 'fuzz-1'], ['x-request-id', 'bad id\twith tab'], ['x-request-id', 'x'.repeat(200)], ['accept', 'application/xml'],
  ['accept', 'text/html;q=0.9, */*;q=0.1'], ['x-forwarded-for', '1.2.3.4'], ['accept-encoding', 'gzip, br'], ['x-http-method-override', 'DELETE'],
  ['origin', 'https://evil.example'], ['host', 'evil.example:1'], ['transfer-encoding', 'chunked']
]

/** Hostile and valid requests for every operation of the document. */
export function requestArbitrary (api: ApiDescription, weights: Record<string, number> = {}): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...api.operations.map((operation) => {
    const takesBody = operation.bodySchema !== undefined
    const body = takesBody
      ? fc.oneof({ weight: 12, arbitrary: bodyArbitrary(api, operation) }, { weight: 1, arbitrary: fc.constant(undefined) })
      : fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant<FuzzBody>({ label: 'body on a bodyless method', text: '{"name":"Rex","categoryId":1}', structured: true, wholeIntegers: true }) })
    const arbitrary = fc.record({
      params: paramsArbitrary(api, operation),
      authorization: authorizationArbitrary(),
      contentType: takesBody ? contentTypeArbitrary(operation.bodyMediaTypes) : fc.option(fc.constantFrom(...JSON_CONTENT_TYPES, 'text/plain'), { nil: undefined, freq: 4 }),
      body,
      contentLengthDelta: fc.oneof({ weight: 20, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constantFrom(-1, 1, 1000) }),
      headers: fc.oneof({ weight: 6, arbitrary: fc.constant([] as Array<[string, string]>) }, { weight: 1, arbitrary: fc.subarray(EXTRA_HEADERS, { maxLength: 2 }) })
    }).map((parts) => withToString({ operation: operation.id, ...parts }))
    const defaultWeight = operation.public ? 1 : takesBody ? 10 : operation.parameters.length > 0 ? 8 : 2
    return { weight: weights[operation.id] ?? defaultWeight, arbitrary }
  }))
}
