/**
 * Property-based fuzzing of the HTTP API, driven by the OpenAPI document the app serves.
 *
 * Every documented operation gets requests built from its parameters and request body:
 * valid ones and hostile ones (missing, garbled or foreign credentials; parameters out of
 * range, of the wrong type, repeated or malformed; wrong content types; malformed, truncated,
 * deeply nested or oversized JSON; huge and unusual Unicode; `__proto__`/`constructor` keys;
 * duplicate keys; extra fields). Each answer must be a status the document lists for the
 * operation, with a body valid against the document's schema for it; never a 5xx; and no
 * error body may carry a stack trace, SQL or a file path. Besides the document, a small model
 * of the catalogue (every pet this fuzzer created) predicts the exact answer where the
 * README's decisions fix it: 401 without a valid key, 400 for an invalid parameter or body,
 * the exact page a list returns, the pet a read returns, Idempotency-Key replays.
 *
 * Used by test/fuzz/openapi-fuzz.test.ts (seeded and short) and scripts/fuzz.ts (long runs).
 */
import { isDeepStrictEqual } from 'node:util'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

// ---------------------------------------------------------------------------------------------
// The document

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Schema = Record<string, unknown>

interface MediaTypeObject { schema?: Schema }
interface ResponseObject { content?: Record<string, MediaTypeObject>, headers?: Record<string, unknown> }
interface ParameterObject { name: string, in: string, required?: boolean, schema?: Schema }
interface OperationObject {
  operationId?: string
  parameters?: ParameterObject[]
  requestBody?: { required?: boolean, content?: Record<string, MediaTypeObject> }
  responses?: Record<string, ResponseObject>
  security?: unknown[]
  servers?: Array<{ url: string }>
}
interface OpenApiDocument {
  openapi: string
  servers?: Array<{ url: string }>
  security?: unknown[]
  paths: Record<string, Record<string, unknown>>
  components?: { schemas?: Record<string, Schema> }
}

/** One documented operation, as the fuzzer needs it. */
export interface ApiOperation {
  id: string
  method: string
  /** The path template as the document writes it, e.g. `/pets/{petId}`. */
  path: string
  /** The path of the operation's server (`/v1`, or `` for the probes that declare their own servers). */
  basePath: string
  /** JSON pointer of the operation in the document. */
  pointer: string
  parameters: ParameterObject[]
  /** The `application/json` request body schema, if the operation takes one. */
  bodySchema: Schema | undefined
  bodyPointer: string | undefined
  /** Every media type the request body is documented in (`application/json`, `application/merge-patch+json`, …). */
  bodyMediaTypes: string[]
  responses: Record<string, ResponseObject>
  /** `security: []`: no key needed. */
  public: boolean
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const DOCUMENT_ID = 'https://petstore.fuzz/openapi.json'

function pointerToken (token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function serverPath (servers: Array<{ url: string }> | undefined): string {
  const url = servers?.[0]?.url
  if (url === undefined) return ''
  return new URL(url, 'http://localhost').pathname.replace(/\/+$/, '')
}

/** The served document, its operations, and validators for every schema in it. */
export class ApiDescription {
  readonly document: OpenApiDocument
  readonly operations: ApiOperation[]
  /** The status of each Error code, as the `code` description of the document's Error schema lists them (`invalid_request` (400), …). */
  readonly errorCodeStatuses: Map<string, number>
  readonly #ajv: Ajv2020
  readonly #validators = new Map<string, ValidateFunction>()

  private constructor (document: OpenApiDocument) {
    this.document = document
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
    // int64/int32 describe the wire type; the ranges are the schemas' minimum and maximum
    this.#ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) })
    this.#ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 })
    this.#ajv.addSchema({ ...document, $id: DOCUMENT_ID })
    const description: unknown = (document.components?.schemas?.Error?.properties as Record<string, Schema> | undefined)?.code?.description
    const codeDescription = typeof description === 'string' ? description : ''
    this.errorCodeStatuses = new Map([...codeDescription.matchAll(/`(\w+)` \((\d{3})\)/g)].map(([, code, status]) => [code as string, Number(status)]))
    this.operations = []
    for (const [path, item] of Object.entries(document.paths)) {
      const pathServers = (item as { servers?: Array<{ url: string }> }).servers
      const pathParameters = (item as { parameters?: ParameterObject[] }).parameters ?? []
      for (const method of METHODS) {
        const operation = item[method] as OperationObject | undefined
        if (operation === undefined) continue
        const pointer = `/paths/${pointerToken(path)}/${method}`
        const json = operation.requestBody?.content?.['application/json']
        const security = operation.security ?? document.security ?? []
        this.operations.push({
          id: operation.operationId ?? `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase(),
          path,
          basePath: serverPath(operation.servers ?? pathServers ?? document.servers),
          pointer,
          parameters: [...pathParameters.filter((p) => !(operation.parameters ?? []).some((o) => o.name === p.name && o.in === p.in)), ...(operation.parameters ?? [])],
          bodySchema: json?.schema === undefined ? undefined : this.resolve(json.schema),
          bodyPointer: json?.schema === undefined ? undefined : `${pointer}/requestBody/content/application~1json/schema`,
          bodyMediaTypes: Object.keys(operation.requestBody?.content ?? {}),
          responses: operation.responses ?? {},
          public: security.length === 0
        })
      }
    }
  }

  /** Reads `GET /v1/openapi.json` from the app. */
  static async load (app: FastifyInstance, url = '/v1/openapi.json'): Promise<ApiDescription> {
    const res = await app.inject({ method: 'GET', url })
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`)
    return new ApiDescription(res.json<OpenApiDocument>())
  }

  operation (id: string): ApiOperation {
    const found = this.operations.find((operation) => operation.id === id)
    if (found === undefined) throw new Error(`the document has no operation ${id}`)
    return found
  }

  /** Follows a local `$ref` (`#/components/schemas/Pet`) to the schema it names. */
  resolve (schema: Schema): Schema {
    let current = schema
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
      const ref = current.$ref
      if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref}`)
      let target: unknown = this.document
      for (const token of ref.slice(2).split('/')) {
        target = (target as Record<string, unknown>)[decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~')]
      }
      if (target === undefined) throw new Error(`dangling $ref ${ref}`)
      current = target as Schema
    }
    return current
  }

  /** Validates `value` against the schema at `pointer` in the document ($refs resolve in the document). */
  validate (pointer: string, value: unknown): string | undefined {
    let validate = this.#validators.get(pointer)
    if (validate === undefined) {
      const fragment = pointer.split('/').map((token) => encodeURIComponent(token)).join('/')
      validate = this.#ajv.compile({ $ref: `${DOCUMENT_ID}#${fragment}` })
      this.#validators.set(pointer, validate)
    }
    if (validate(value)) return undefined
    return this.#ajv.errorsText(validate.errors, { dataVar: 'body' })
  }

  /** Validates a bare value (a parameter) against a schema taken from the document. */
  validateValue (schema: Schema, value: unknown): boolean {
    const key = `value:${JSON.stringify(schema)}`
    let validate = this.#validators.get(key)
    if (validate === undefined) {
      validate = this.#ajv.compile(rebaseRefs(schema) as object)
      this.#validators.set(key, validate)
    }
    return validate(value)
  }
}

function rebaseRefs (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebaseRefs)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) =>
    [key, key === '$ref' && typeof inner === 'string' && inner.startsWith('#') ? DOCUMENT_ID + inner : rebaseRefs(inner)]))
}

// ---------------------------------------------------------------------------------------------
// Requests, as generated (symbolic where they name state: an existing pet, an issued cursor)

/** A parameter value: text (percent-encoded into the URL), raw URL text, or something resolved when sent. */
export type ParamValue =
  | { kind: 'text', text: string }
  | { kind: 'raw', text: string }
  | { kind: 'pet', index: number }
  | { kind: 'cursor', status: string | undefined, tamper: 'none' | 'flip' | 'suffix' }
  | { kind: 'etag', of: 'target' | 'other', weak: boolean }

export interface FuzzParam { in: string, name: string, value: ParamValue }

export type FuzzBody =
  | { label: string, text: string, structured: boolean, wholeIntegers: boolean }
  | { label: string, bytes: number[] }

export interface FuzzRequest {
  operation: string
  params: FuzzParam[]
  /** The Authorization header; `{key}` stands for the valid key. Undefined: no header. */
  authorization: string | undefined
  contentType: string | undefined
  body: FuzzBody | undefined
  /** Added to the true Content-Length (0: Node's own). */
  contentLengthDelta: number
  headers: Array<[string, string]>
}

const KEY_PLACEHOLDER = '{key}'

function shorten (text: string, max = 160): string {
  const visible = JSON.stringify(text)
  return visible.length <= max ? visible : `${visible.slice(0, max)}…(${text.length} chars)`
}

function describeParamValue (value: ParamValue): string {
  switch (value.kind) {
    case 'text': return shorten(value.text)
    case 'raw': return `raw ${shorten(value.text)}`
    case 'pet': return `<id of existing pet #${value.index}>`
    case 'cursor': return `<cursor of a list${value.status === undefined ? '' : ` with status=${value.status}`}${value.tamper === 'none' ? '' : `, tampered (${value.tamper})`}>`
    case 'etag': return `<${value.weak ? 'weak ' : ''}ETag of ${value.of === 'target' ? 'the pet asked for' : 'another pet'}>`
  }
}

/** A readable one-screen description of a generated request (fast-check prints it for a counterexample). */
export function describeRequest (request: FuzzRequest): string {
  const lines = [`${request.operation}:`]
  for (const param of request.params) lines.push(`  ${param.in} ${JSON.stringify(param.name)} = ${describeParamValue(param.value)}`)
  lines.push(`  Authorization: ${request.authorization === undefined ? '(none)' : JSON.stringify(request.authorization).split(KEY_PLACEHOLDER).join('<valid key>').split('{key-1}').join('<valid key minus its last character>').split('{KEY}').join('<valid key in upper case>')}`)
  if (request.contentType !== undefined) lines.push(`  Content-Type: ${JSON.stringify(request.contentType)}`)
  for (const [name, value] of request.headers) lines.push(`  ${name}: ${shorten(value)}`)
  if (request.contentLengthDelta !== 0) lines.push(`  Content-Length: true length ${request.contentLengthDelta > 0 ? '+' : ''}${request.contentLengthDelta}`)
  if (request.body !== undefined) {
    lines.push('text' in request.body
      ? `  body (${request.body.label}): ${shorten(request.body.text, 400)}`
      : `  body (${request.body.label}): bytes ${Buffer.from(request.body.bytes).toString('hex').slice(0, 400)}`)
  }
  return lines.join('\n')
}

function withToString (request: FuzzRequest): FuzzRequest {
  Object.defineProperty(request, fc.toStringMethod, { value: () => describeRequest(request), enumerable: false })
  return request
}

// ---------------------------------------------------------------------------------------------
// Generators

const VALID_AUTHORIZATIONS = ['Bearer {key}', 'bearer {key}', 'BEARER {key}', 'Bearer   {key}', 'Bearer {key} ']
const HOSTILE_AUTHORIZATIONS = [
  '', '   ', 'Bearer', 'Bearer ', 'Bearer  ', 'Basic dXNlcjpwYXNz', 'Basic {key}', 'Token {key}', '{key}', 'Bearer {key}x',
  'Bearer {key}{key}', 'Bearer "{key}"', 'Bearer {key},Bearer {key}', 'Bearer {key}, Bearer {key}', 'Bearer\t{key}', 'Bearer {key}=',
  'Bearer =', 'Bearer petstore_', 'Bearer null', 'Bearer undefined', 'Bearer \u00ff\u00fe', 'Bearer {key}\u00e9', 'Digest username="a"',
  'Negotiate YIIB', 'Bearer:{key}', 'Bearer={key}', `Bearer ${'A'.repeat(8000)}`, 'Bearer ../../etc/passwd', "Bearer ' OR '1'='1"
]
// RFC 6750 b64token characters, and printable Latin-1 (what an HTTP header value can carry)
const B64TOKEN = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=']
const LATIN1 = Array.from({ length: 0xff - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i)).filter((c) => c !== '\x7f')

// keys one step from the valid one: `{key-1}` is the key without its last character, `{KEY}` the key in upper case
const NEAR_MISS_AUTHORIZATIONS = ['Bearer {key}x', 'Bearer {key-1}', 'Bearer {KEY}', 'Bearer {key}=', 'Bearer x{key}', 'Bearer {key-1}A', 'Bearer {key}.', 'Bearer {key}/']

function authorizationArbitrary (): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...VALID_AUTHORIZATIONS) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_AUTHORIZATIONS) },
    { weight: 3, arbitrary: fc.constantFrom(...NEAR_MISS_AUTHORIZATIONS) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...B64TOKEN), minLength: 1, maxLength: 60 }).map((token) => `Bearer ${token}`) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...LATIN1), maxLength: 60 }) }
  )
}

const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8']
const OTHER_CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream',
  'application/jsonx', 'application/json-patch+json', 'application/vnd.api+json', 'application/problem+json', 'APPLICATION/JSON',
  'application/JSON;charset=UTF-8', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json;',
  ' application/json', 'json', '*/*', '', 'application/json, text/plain', 'text/json', 'application/json; charset="utf-8"'
]

/** Content types for a body documented in `mediaTypes`: mostly those (and JSON), sometimes none or another. */
function contentTypeArbitrary (mediaTypes: readonly string[]): fc.Arbitrary<string | undefined> {
  const documented = mediaTypes.filter((type) => type !== 'application/json').flatMap((type) => [type, `${type}; charset=utf-8`])
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...JSON_CONTENT_TYPES, ...documented) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(...OTHER_CONTENT_TYPES) }
  )
}

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

function integerArbitrary (minimum: number, maximum: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.constantFrom(minimum, maximum, Math.min(Math.max(0, minimum), maximum), Math.min(Math.max(1, minimum), maximum)),
    fc.integer({ min: Math.max(minimum, -1000), max: Math.min(maximum, 1000) }),
    fc.bigInt({ min: BigInt(minimum), max: BigInt(maximum) }).map(Number)
  )
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
      return textArbitrary(Number(schema.minLength ?? 0), Number(schema.maxLength ?? 200))
    case 'integer':
      return integerArbitrary(Number(schema.minimum ?? Number.MIN_SAFE_INTEGER), Number(schema.maximum ?? Number.MAX_SAFE_INTEGER))
    case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'boolean': return fc.boolean()
    case 'array': return fc.array(rawValueArbitrary(api, (schema.items ?? {}) as Schema), { maxLength: 3 })
    default: return fc.jsonValue()
  }
}

// JSON texts of the wrong type, out of range, or written in ways a strict API must refuse
const HOSTILE_JSON_VALUES = [
  'null', 'true', 'false', '0', '-1', '1.5', '-0', '1.0', '1e2', '1E400', '-1E400', '9007199254740991', '9007199254740992',
  '9007199254740993', '-9007199254740991', '-9007199254740992', '18446744073709551616', '1' + '0'.repeat(400), '0.1', '1.0000000000000001',
  '9007199254740990.6', '2e-1', '"5"', '""', '" "', '"\\u0000"', '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\udc36"', '"\\t"', '"a\\nb"',
  '"🐶"', '[]', '{}', '[1]', '{"a":1}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}',
  '"available"', '"SOLD"', '"Available"', `"${'x'.repeat(101)}"`, `"${'🐶'.repeat(101)}"`, `"${'x'.repeat(5000)}"`
]
// an integer field written at and past its limits, as whole numbers with a fraction or exponent, as fractions that parse to integers, or not as JSON at all
const INTEGER_SPELLINGS = [
  '1.0', '1e2', '1E2', '1e+2', '100e-2', '0e0', '-0.0', '1.0000000000000001', '9007199254740990.6', '9007199254740991.0', '1.5', '-1.5',
  '9007199254740991', '-9007199254740991', '9007199254740992', '-9007199254740992', '9007199254740993', '4294967296', '-1', '0', '-0', '1E400',
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
  const entriesOf = (value: Record<string, Json>): Entry[] => Object.entries(value).map(([key, inner]) => ({ key, literal: JSON.stringify(inner) }))
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
        const duplicate = { key: field, literal: hostile ?? JSON.stringify(other[field] ?? 'dup') }
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
        const text = JSON.stringify(value)
        return unstructured('truncated', text.slice(0, cut % text.length))
      })
    },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...NOT_JSON), fc.string({ unit: 'binary', maxLength: 50 })).map((text) => unstructured('not JSON', text)) },
    { weight: 1, arbitrary: fc.tuple(validObject, fc.constantFrom('\ufeff', ' \n\t\r', '\n')).map(([value, prefix]) => unstructured(`${JSON.stringify(prefix)} around`, prefix + JSON.stringify(value) + (prefix === '\ufeff' ? '' : prefix))) },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fieldName, fc.constantFrom(101, 1000, 5000, 5460, 8000, 16300, 16400, 20000), fc.constantFrom('x', 'é', '🐶', '\u4e00', ' ')).map(([value, field, length, character]) =>
        structured(`huge "${field}" (${length} × ${JSON.stringify(character)})`, [...entriesOf(value).filter((entry) => entry.key !== field), { key: field, literal: JSON.stringify(character.repeat(length)) }]))
    },
    {
      weight: 2,
      arbitrary: fc.tuple(validObject, fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([value, bad, at]) => {
        const bytes = [...Buffer.from(JSON.stringify(value), 'utf8')]
        const position = bytes.indexOf(0x22, 2) + 1 || at % bytes.length
        bytes.splice(position, 0, ...bad)
        return { label: `invalid UTF-8 ${Buffer.from(bad).toString('hex')}`, bytes }
      })
    },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', '\t\r\n').map((text) => unstructured('empty', text)) }
  )
}

const IDEMPOTENCY_KEYS = ['k-1', 'k-2', 'k-3', '"k-1"', '"k-2"', '8e03978e-40d5-43e8-bc93-6894a57f9324']
const HOSTILE_IDEMPOTENCY_KEYS = ['', ' ', 'a b', '"', '""', '"a', 'a"b', 'a\\b', 'x'.repeat(255), 'x'.repeat(256), '"' + 'x'.repeat(255) + '"', 'ключ', '\u00e9', '\t', 'k-1, k-2']
const IF_NONE_MATCH = ['*', ' * ', 'W/"x"', '"x"', '', ',', 'W/', '"a", "b"', '"a", *', '*, "a"', 'x', '"' + 'a'.repeat(500) + '"']
const IF_MATCH = [...IF_NONE_MATCH, ', "x",', '"a" "b"', '**', '"x"\t,\t"y"', '"\u00e9"']
const STRING_VALUES = ['', ' ', 'x', '\u0000', '🐶', '%', '../', '\\', '"', 'null', '[]', '{}', '?', '&', '=', '#', '+', 'a+b', 'x'.repeat(600)]
const RAW_URL_TEXT = ['%', '%ZZ', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%%', '%2', '%G1']
const JUNK_QUERY_NAMES = ['LIMIT', 'Status', 'limit[]', 'cursor ', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'api_key', 'access_token', '', '🐶', 'x'.repeat(2000), 'a[b][c]', 'limit.x']

function integerParameterTexts (minimum: number, maximum: number): fc.Arbitrary<string> {
  const valid = integerArbitrary(minimum, maximum).map(String)
  const invalid = fc.constantFrom(
    String(minimum - 1), String(maximum + 1), '0', '-1', '-0', String(2 ** 53), String(2 ** 53 + 2), '1.5', '2.0', '1e1', '0x2', '+2', ' 2', '2 ',
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
    const valueArbitrary = text(integerParameterTexts(Number(schema.minimum ?? -(2 ** 31)), Number(schema.maximum ?? 2 ** 31)))
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

// ---------------------------------------------------------------------------------------------
// Sending and checking

export interface Pet { id: number, name: string, categoryId: number, status: string }

// the status lifecycle of the README (updatePet): where each status may move besides staying; sold is final
const STATUS_MOVES: Record<string, readonly string[] | undefined> = { available: ['pending', 'sold'], pending: ['available', 'sold'], sold: [] }

/** A failed property: what was wrong, with the request as sent and the answer. */
export class FuzzFailure extends Error {
  constructor (problems: string[], sent: string, res: LightMyRequestResponse | undefined) {
    super([
      ...problems.map((problem) => `✗ ${problem}`),
      'request as sent:',
      sent,
      ...(res === undefined ? [] : [`answer: ${res.statusCode} ${String(res.headers['content-type'] ?? '')} ${shorten(res.body, 600)}`])
    ].join('\n'))
    this.name = 'FuzzFailure'
    // where in the fuzzer it was noticed says nothing about the service: the report shows the request instead
    this.stack = `${this.name}: ${this.message}`
  }
}

/** Counts of what a run saw. */
export class FuzzStats {
  cases = 0
  requests = 0
  readonly statuses = new Map<string, number>()

  count (operation: string, status: number): void {
    this.requests++
    const key = `${operation} ${status}`
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1)
  }

  /** `listPets 200: 120, listPets 400: 80, …` sorted by operation and status. */
  summary (): string {
    return [...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`).join(', ')
  }
}

// what must never reach a client in an error body
const LEAK_PATTERNS: Array<[string, RegExp]> = [
  ['a stack frame', /\bat\s+(?:\S+\s+\()?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/],
  ['a file path', /\/(?:work|home|root|usr|opt|srv|app|tmp|var|etc|proc)\/[\w.-]+|node_modules|[A-Za-z]:\\\w|\bfile:\/\/|\bnode:internal/],
  ['a source location', /\b[\w-]+\.(?:ts|js|mjs|cjs)(?::\d+|\b)/],
  ['SQL', /\b(?:SELECT\s[\s\S]+?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX)|ON\s+CONFLICT|RETURNING\s+\w)/i],
  ['a database error', /SQLITE_\w+|\bsqlite\b|better-sqlite3|\bpostgres(?:ql)?\b|\bpg_\w+|\brelation\s+"|syntax error at or near|violates\s[\w ]*constraint|duplicate key value|\bSQLSTATE\b|\bECONNREFUSED\b|\bENOENT\b/i],
  ['an exception', /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|AssertionError|Error):|Maximum call stack|\bundefined is not|Cannot read propert|is not a function|\bFST_[A-Z_]+|\bERR_[A-Z_]{3,}|\bajv\b/]
]

/** The leaks in an error body; text the request itself carried (echoed back) does not count. */
export function findLeaks (body: string, requestText: string): string[] {
  const found: string[] = []
  const echoed = requestText.toLowerCase()
  for (const [what, pattern] of LEAK_PATTERNS) {
    for (const match of body.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g'))) {
      if (!echoed.includes(match[0].toLowerCase())) found.push(`${what}: ${JSON.stringify(match[0])}`)
    }
  }
  return found
}

/** Every byte as %XX except the unreserved characters: a value reaches the server exactly as generated. */
function percentEncode (text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const character = String.fromCharCode(byte)
    out += /[A-Za-z0-9_~-]/.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })
const BODY_LIMIT_BYTES = 16 * 1024
const MAX_PARAM_LENGTH = 1000

type AuthClass = 'valid' | 'missing' | 'malformed' | 'unknown'
// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token, the scheme name case-insensitive
const BEARER_CREDENTIALS = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

interface Sent {
  method: string
  url: string
  headers: Record<string, string>
  payload: string | Buffer | undefined
  /** The body bytes as they reach the server. */
  bytes: Buffer | undefined
  /** What a parameter holds once decoded by the server (for query, every value of the name). */
  values: Map<string, string[]>
  /** The cursor's status filter when a cursor was resolved, for checking it against `status`. */
  cursorStatus: string | undefined | null
  cursorTampered: boolean
  /** A Content-Length header that differs from the body's length. */
  lengthMismatch: boolean
  /** The pet id the If-None-Match or If-Match ETag belongs to (resolved etags only). */
  etagOf: number | undefined
  /** A path parameter that cannot be routed (bad percent-encoding, over the router's length). */
  unroutable: boolean
  /** Text the request carried, for telling an echo from a leak. */
  echoable: string
  display: string
}

export interface FuzzerOptions {
  /** Pets created before fuzzing, so that ids, cursors and ETags can refer to something. */
  seedPets?: number
}

/**
 * Sends generated requests to one app and checks every answer against the document and a model
 * of the catalogue. The app must be used by nothing else while it runs (the model would drift).
 */
export class ApiFuzzer {
  readonly app: FastifyInstance
  readonly api: ApiDescription
  readonly stats = new FuzzStats()
  /** Every pet created through this fuzzer, by id, as its 201 returned it. */
  readonly pets = new Map<number, Pet>()
  readonly #key: string
  readonly #idempotency = new Map<string, { fingerprint: string, pet: Pet }>()

  constructor (app: FastifyInstance, api: ApiDescription, key: string) {
    this.app = app
    this.api = api
    this.#key = key
  }

  static async create (app: FastifyInstance, key: string, options: FuzzerOptions = {}): Promise<ApiFuzzer> {
    const fuzzer = new ApiFuzzer(app, await ApiDescription.load(app), key)
    const statuses = ['available', 'pending', 'sold']
    for (let i = 0; i < (options.seedPets ?? 6); i++) {
      await fuzzer.send({
        operation: 'createPet',
        params: [],
        authorization: 'Bearer {key}',
        contentType: 'application/json',
        body: { label: 'seed', text: JSON.stringify({ name: `Seed ${i}`, categoryId: i, status: statuses[i % 3] }), structured: true, wholeIntegers: true },
        contentLengthDelta: 0,
        headers: []
      })
    }
    return fuzzer
  }

  get authHeader (): { authorization: string } {
    return { authorization: `Bearer ${this.#key}` }
  }

  #sortedPets (): Pet[] {
    return [...this.pets.values()].sort((a, b) => a.id - b.id)
  }

  /** Resolves the symbolic parts of a request (existing ids, issued cursors, ETags) into what is sent. */
  async #resolve (request: FuzzRequest, operation: ApiOperation): Promise<Sent> {
    const pets = this.#sortedPets()
    const values = new Map<string, string[]>()
    const echo: string[] = []
    let path = operation.basePath + operation.path
    const query: string[] = []
    const headers: Record<string, string> = {}
    let cursorStatus: string | undefined | null = null
    let cursorTampered = false
    let etagOf: number | undefined
    let unroutable = false
    const targetId = (): number | undefined => {
      const value = values.get('path:petId')?.[0]
      return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined
    }
    // path parameters first: an ETag refers to the pet the path names
    const ordered = [...request.params].sort((a, b) => Number(b.in === 'path') - Number(a.in === 'path'))
    for (const param of ordered) {
      let decoded: string
      let encoded: string
      switch (param.value.kind) {
        case 'text':
          decoded = param.value.text
          encoded = percentEncode(decoded)
          break
        case 'raw':
          decoded = param.value.text
          encoded = param.value.text
          break
        case 'pet': {
          const pet = pets[param.value.index % Math.max(pets.length, 1)]
          decoded = String(pet?.id ?? 1)
          encoded = decoded
          break
        }
        case 'cursor': {
          const cursor = await this.#issuedCursor(param.value.status)
          decoded = cursor === undefined ? 'no-cursor-was-issued' : param.value.tamper === 'flip' ? (cursor.startsWith('A') ? 'B' : 'A') + cursor.slice(1) : param.value.tamper === 'suffix' ? `${cursor}.x` : cursor
          encoded = percentEncode(decoded)
          cursorStatus = cursor === undefined ? null : param.value.status
          cursorTampered = cursor === undefined || param.value.tamper !== 'none'
          break
        }
        case 'etag': {
          const target = targetId()
          const pet = param.value.of === 'target' ? pets.find((p) => p.id === target) : pets.find((p) => p.id !== target)
          const etag = pet === undefined ? undefined : await this.#etagOf(pet.id)
          decoded = etag === undefined ? '"none"' : (param.value.weak ? 'W/' : '') + etag
          encoded = decoded
          etagOf = etag === undefined ? undefined : pet?.id
          break
        }
      }
      echo.push(param.name, decoded, encoded)
      const key = `${param.in}:${param.name}`
      values.set(key, [...(values.get(key) ?? []), decoded])
      if (param.in === 'path') {
        if (param.value.kind === 'raw' || encoded.length > MAX_PARAM_LENGTH) unroutable = true
        path = path.replace(`{${param.name}}`, encoded)
      } else if (param.in === 'query') {
        query.push(`${percentEncode(param.name)}=${encoded}`)
      } else if (param.in === 'header') {
        headers[param.name.toLowerCase()] = decoded
      }
    }
    if (request.authorization !== undefined) {
      headers.authorization = request.authorization.split(KEY_PLACEHOLDER).join(this.#key)
        .split('{key-1}').join(this.#key.slice(0, -1)).split('{KEY}').join(this.#key.toUpperCase())
    }
    if (request.contentType !== undefined) headers['content-type'] = request.contentType
    for (const [name, value] of request.headers) {
      headers[name] = value
      echo.push(value)
    }
    let payload: string | Buffer | undefined
    let bytes: Buffer | undefined
    let lengthMismatch = false
    if (request.body !== undefined) {
      payload = 'text' in request.body ? request.body.text : Buffer.from(request.body.bytes)
      bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8')
      echo.push(bytes.toString('utf8'))
      if (request.contentLengthDelta !== 0) {
        const declared = Math.max(0, bytes.length + request.contentLengthDelta)
        headers['content-length'] = String(declared)
        lengthMismatch = declared !== bytes.length
      }
    }
    // what a client can put on the wire: text beyond Latin-1 travels as its UTF-8 bytes
    for (const [name, value] of Object.entries(headers)) {
      if ([...value].some((character) => character.charCodeAt(0) > 0xff)) headers[name] = Buffer.from(value, 'utf8').toString('latin1')
    }
    if (headers['transfer-encoding'] !== undefined && payload === undefined) delete headers['transfer-encoding']
    const url = query.length === 0 ? path : `${path}?${query.join('&')}`
    echo.push(url, decodeSafely(url), headers.authorization ?? '')
    const display = [
      `${operation.method} ${url.length > 600 ? `${url.slice(0, 600)}…(${url.length} chars)` : url}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${name === 'authorization' ? value.split(this.#key).join('<valid key>').split(this.#key.slice(0, -1)).join('<valid key minus its last character>').split(this.#key.toUpperCase()).join('<valid key in upper case>') : shorten(value, 200).slice(1, -1)}`),
      ...(bytes === undefined ? [] : [`body (${bytes.length} bytes): ${shorten(bytes.toString('utf8'), 600)}`])
    ].join('\n')
    return { method: operation.method, url, headers, payload, bytes, values, cursorStatus, cursorTampered, lengthMismatch, etagOf, unroutable, echoable: echo.join('\n'), display }
  }

  /** The cursor of the `next` link of a one-pet page (with `status`), as a client would follow it. */
  async #issuedCursor (status: string | undefined): Promise<string | undefined> {
    const operation = this.api.operation('listPets')
    const res = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets?limit=1${status === undefined ? '' : `&status=${status}`}`, headers: this.authHeader })
    const next = nextLink(res)
    return next === undefined ? undefined : new URL(next, 'http://x').searchParams.get('cursor') ?? undefined
  }

  async #etagOf (id: number): Promise<string | undefined> {
    const operation = this.api.operation('getPet')
    const res = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets/${id}`, headers: this.authHeader })
    const etag = res.headers.etag
    return typeof etag === 'string' ? etag : undefined
  }

  /** Sends one request and checks its answer; throws a {@link FuzzFailure} naming every problem. */
  async send (request: FuzzRequest): Promise<LightMyRequestResponse> {
    const operation = this.api.operation(request.operation)
    const sent = await this.#resolve(request, operation)
    let res: LightMyRequestResponse
    try {
      res = await this.app.inject({ method: sent.method as 'GET', url: sent.url, headers: sent.headers, ...(sent.payload === undefined ? {} : { payload: sent.payload }) })
    } catch (error) {
      throw new FuzzFailure([`the request could not be sent: ${String(error)}`], sent.display, undefined)
    }
    this.stats.count(operation.id, res.statusCode)
    const problems = this.checkConformance(operation, res, sent.echoable)
    if (problems.length === 0) problems.push(...await this.#checkModel(request, operation, sent, res))
    if (problems.length > 0) throw new FuzzFailure(problems, sent.display, res)
    return res
  }

  /** What the document promises about any answer of `operation`. */
  checkConformance (operation: ApiOperation, res: LightMyRequestResponse, echoable: string): string[] {
    const problems: string[] = []
    const status = res.statusCode
    const documented = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default
    // 501 is a deliberate answer (an operation documented as not implemented); any other 5xx is a fault
    if (status >= 500 && !(status === 501 && operation.responses['501'] !== undefined)) problems.push(`answered ${status}: a server error`)
    if (documented === undefined) {
      problems.push(`status ${status} is not documented for ${operation.id} (documented: ${Object.keys(operation.responses).join(', ')})`)
      return problems
    }
    const key = operation.responses[String(status)] !== undefined ? String(status) : operation.responses[`${String(status)[0]}XX`] !== undefined ? `${String(status)[0]}XX` : 'default'
    const mediaTypes = Object.keys(documented.content ?? {})
    if (mediaTypes.length === 0) {
      if (res.rawPayload.length > 0) problems.push(`a ${status} is documented without a body, but one came: ${shorten(res.body)}`)
    } else {
      const contentType = String(res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
      const mediaType = mediaTypes.find((type) => type.toLowerCase() === contentType)
      if (mediaType === undefined) {
        problems.push(`Content-Type ${JSON.stringify(res.headers['content-type'])} is not one documented for ${status} (${mediaTypes.join(', ')})`)
      } else {
        const pointer = `${operation.pointer}/responses/${key}/content/${pointerToken(mediaType)}/schema`
        let body: unknown = res.body
        let parsed = true
        if (mediaType.includes('json')) {
          try {
            body = JSON.parse(res.body)
          } catch {
            parsed = false
            problems.push('the body is not JSON')
          }
        }
        const invalid = parsed ? this.api.validate(pointer, body) : undefined
        if (invalid !== undefined) problems.push(`the ${status} body does not match its documented schema: ${invalid}`)
        if (parsed && status >= 400 && body !== null && typeof body === 'object' && 'status' in body && body.status !== status) {
          problems.push(`the Error body says status ${String(body.status)} but the answer is ${status}`)
        }
        const code = parsed && status >= 400 && body !== null && typeof body === 'object' && 'code' in body ? String(body.code) : undefined
        const codeStatus = code === undefined ? undefined : this.api.errorCodeStatuses.get(code)
        if (codeStatus !== undefined && codeStatus !== status) problems.push(`code ${code} is documented as ${codeStatus}, but the answer is ${status}`)
      }
    }
    if (status >= 400) {
      for (const leak of findLeaks(res.body, echoable)) problems.push(`the error body leaks ${leak}`)
    }
    if (res.headers['x-request-id'] === undefined) problems.push('no X-Request-Id')
    return problems
  }

  /** What the README's decisions and the model of the catalogue say this answer must be. */
  async #checkModel (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse): Promise<string[]> {
    const problems: string[] = []
    const status = res.statusCode
    const expect = (allowed: number[], why: string): void => {
      if (!allowed.includes(status)) problems.push(`expected ${allowed.join(' or ')} (${why}), got ${status}`)
    }
    if (operation.public) {
      expect([200], 'a public operation')
      return problems
    }
    if (sent.unroutable) {
      // the URL cannot be decoded or routed: refused before any route (or its authentication) runs, so
      // without the route's own headers (getPet's Deprecation/Sunset); a 400 of the document all the same
      expect([400], 'the path does not decode, or a parameter is over the router\'s length limit')
      return problems
    }
    const auth = this.#authClass(sent.headers.authorization)
    if (auth !== 'valid') {
      expect([401], `authentication comes first, and the key is ${auth}`)
      const challenge = String(res.headers['www-authenticate'] ?? '')
      const expected = auth === 'missing' ? 'Bearer realm="petstore"' : `Bearer realm="petstore", error="${auth === 'malformed' ? 'invalid_request' : 'invalid_token'}"`
      if (status === 401 && challenge !== expected) problems.push(`WWW-Authenticate is ${JSON.stringify(challenge)}, expected ${JSON.stringify(expected)}`)
      return problems
    }
    if (operation.parameters.some((parameter) => parameter.in === 'path' && sent.values.get(`path:${parameter.name}`)?.[0] === '')) {
      // an empty path parameter leaves the path ending in "/", which no route serves (before any parameter is looked at)
      expect([404], 'the path ends in "/"')
      return problems
    }
    const unknown = this.#unknownQueryParameter(operation, sent)
    if (unknown !== undefined) {
      // query validation comes after the body is parsed and validated: a body that fails first decides the answer
      const verdict = operation.bodySchema === undefined ? undefined : this.#judgeBody(request, operation, sent)
      expect(verdict?.kind === 'expect' ? verdict.statuses : [400], `query parameter ${JSON.stringify(shorten(unknown, 40))} is not documented`)
      return problems
    }
    switch (operation.id) {
      case 'listStoreOrders':
        expect([501], 'store orders are not implemented')
        break
      case 'listPets':
        this.#checkList(operation, sent, res, expect, problems)
        break
      case 'getPet':
        this.#checkGet(operation, sent, res, expect, problems)
        break
      case 'createPet':
        await this.#checkCreate(request, operation, sent, res, expect, problems)
        break
      case 'updatePet':
        await this.#checkUpdate(request, operation, sent, res, expect, problems)
        break
      case 'listEvents':
        this.#checkEvents(operation, sent, res, expect, problems)
        break
    }
    return problems
  }

  /** The feed: valid parameters are a 200 page in id order, after `after`, of the asked type, with a next link after its last event. */
  #checkEvents (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    // nothing is deleted by retention during a fuzzing run: a valid page is always served
    expect([200], 'valid parameters')
    if (res.statusCode !== 200) return
    const events = res.json<Array<{ id: number, type: string }>>()
    const after = Number(sent.values.get('query:after')?.[0] ?? 0)
    const type = sent.values.get('query:type')?.[0]
    const limitSchema = this.api.resolve(operation.parameters.find((p) => p.name === 'limit')?.schema ?? {})
    const limit = Number(sent.values.get('query:limit')?.[0] ?? limitSchema.default)
    if (events.length > limit) problems.push(`${events.length} events on a page of limit ${limit}`)
    if (events.some((event, i) => event.id <= (i === 0 ? after : (events[i - 1] as { id: number }).id))) problems.push('events not in increasing id order after `after`')
    if (type !== undefined && events.some((event) => event.type !== type)) problems.push(`an event of another type than ${type}`)
    const next = nextLink(res)
    const expectedAfter = String(events.at(-1)?.id ?? after)
    if (next === undefined || new URL(next).searchParams.get('after') !== expectedAfter) problems.push(`the next link ${String(next)} does not continue after ${expectedAfter}`)
  }

  #authClass (header: string | undefined): AuthClass {
    if (header === undefined || header.trim() === '') return 'missing'
    const match = BEARER_CREDENTIALS.exec(header)
    if (match === null) return 'malformed'
    return match[1] === this.#key ? 'valid' : 'unknown'
  }

  /** A query parameter sent that the operation does not document (which it must refuse). */
  #unknownQueryParameter (operation: ApiOperation, sent: Sent): string | undefined {
    const documented = new Set(operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name))
    for (const key of sent.values.keys()) {
      if (key.startsWith('query:') && !documented.has(key.slice('query:'.length))) return key.slice('query:'.length)
    }
    return undefined
  }

  /** Whether the decoded query, path and header parameters are valid against their schemas (integers in plain decimal). */
  #parameterProblem (operation: ApiOperation, sent: Sent): string | undefined {
    for (const parameter of operation.parameters) {
      if (parameter.in !== 'query' && parameter.in !== 'path' && parameter.in !== 'header') continue
      const given = sent.values.get(`${parameter.in}:${parameter.name}`) ?? []
      if (given.length === 0) {
        if (parameter.required === true) return `${parameter.name} is missing`
        continue
      }
      if (given.length > 1) return `${parameter.name} is repeated`
      const text = given[0] as string
      const schema = this.api.resolve(parameter.schema ?? {})
      const value = schema.type === 'integer' ? (/^-?\d+$/.test(text) ? Number(text) : text) : text
      if (!this.api.validateValue(schema, value)) return `${parameter.name}=${shorten(text, 40)} is invalid`
    }
    return undefined
  }

  #checkList (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    const status = sent.values.get('query:status')?.[0]
    const hasCursor = sent.values.has('query:cursor')
    if (hasCursor && sent.cursorStatus === null) return expect([400], 'the cursor was not issued by the service')
    if (hasCursor && sent.cursorTampered) return expect([400], 'the cursor was altered')
    if (hasCursor && sent.cursorStatus !== status) return expect([400], 'the cursor belongs to another status filter')
    expect([200], 'valid parameters')
    if (res.statusCode !== 200) return
    const limitSchema = this.api.resolve(operation.parameters.find((p) => p.name === 'limit')?.schema ?? {})
    const limit = Number(sent.values.get('query:limit')?.[0] ?? limitSchema.default)
    const matching = this.#sortedPets().filter((pet) => status === undefined || pet.status === status)
    // a resolved cursor comes from the next link of a one-pet page: the page after the first matching pet
    const start = hasCursor ? 1 : 0
    const expected = matching.slice(start, start + limit)
    if (!isDeepStrictEqual(canonical(res.json()), canonical(expected))) {
      problems.push(`the page is not the ${limit} pets expected after ${start} (ids ${JSON.stringify(expected.map((p) => p.id))}, got ${JSON.stringify(res.json<Pet[]>().map((p) => p.id))})`)
    }
    const more = matching.length > start + limit
    if (more !== (nextLink(res) !== undefined)) problems.push(more ? 'more pets match but there is no next link' : 'a next link on the last page')
  }

  #checkGet (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    for (const header of ['deprecation', 'sunset', 'link']) {
      if (res.headers[header] === undefined) problems.push(`getPet answered without ${header}`)
    }
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    const id = Number(sent.values.get('path:petId')?.[0])
    const pet = this.pets.get(id)
    if (pet === undefined) return expect([404], `no pet has id ${id}`)
    const ifNoneMatch = sent.headers['if-none-match']
    if (ifNoneMatch === undefined) expect([200], 'the pet exists')
    else if (ifNoneMatch.trim() === '*' || sent.etagOf === id) expect([304], 'If-None-Match matches')
    else if (sent.etagOf !== undefined) expect([200], 'If-None-Match is another pet\'s ETag')
    else expect([200, 304], 'If-None-Match is present')
    if (res.statusCode === 200 && !isDeepStrictEqual(canonical(res.json()), canonical(pet))) {
      problems.push(`the pet read differs from the pet created: ${JSON.stringify(pet)}`)
    }
  }

  async #checkCreate (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): Promise<void> {
    const verdict = this.#judgeBody(request, operation, sent)
    const idempotencyHeader = sent.headers['idempotency-key']
    const idempotencyKey = idempotencyHeader === undefined ? undefined : parseIdempotencyKeyHeader(idempotencyHeader)
    if (verdict.kind === 'expect') {
      expect(verdict.statuses, verdict.why)
    } else if (verdict.kind === 'valid') {
      if (idempotencyKey === null) {
        expect([400], 'the Idempotency-Key is malformed')
      } else if (idempotencyKey === undefined) {
        expect([201], 'a valid pet')
      } else {
        const earlier = this.#idempotency.get(idempotencyKey)
        if (earlier === undefined) expect([201], 'a valid pet with a new Idempotency-Key')
        else if (earlier.fingerprint === fingerprint(verdict.pet)) expect([201], 'a repeat of an earlier create with the same Idempotency-Key')
        else expect([422], 'the Idempotency-Key was used with another body')
      }
    }
    if (res.statusCode !== 201) return
    const pet = res.json<Pet>()
    const replayed = res.headers['idempotent-replayed'] === 'true'
    if (idempotencyKey === null) problems.push('a 201 despite a malformed Idempotency-Key')
    if (res.headers.location !== `${operation.basePath}/pets/${pet.id}`) problems.push(`Location is ${JSON.stringify(res.headers.location)}`)
    if (verdict.kind !== 'valid' && verdict.kind !== 'unsure') return
    if (verdict.kind === 'unsure' && verdict.pet === undefined) {
      problems.push('a 201 for a body that is not a valid NewPet')
      return
    }
    const asked = verdict.pet as Record<string, unknown>
    const earlier = idempotencyKey === undefined || idempotencyKey === null ? undefined : this.#idempotency.get(idempotencyKey)
    if (replayed) {
      if (earlier === undefined) problems.push('Idempotent-Replayed on a first use of the key')
      else if (earlier.fingerprint !== fingerprint(asked)) problems.push(`a replay for another body (the key was first used for ${JSON.stringify(earlier.pet)})`)
      else if (!isDeepStrictEqual(canonical(pet), canonical(earlier.pet))) problems.push(`the replay differs from the first answer ${JSON.stringify(earlier.pet)}`)
      return
    }
    if (earlier !== undefined) problems.push('a repeat with the same Idempotency-Key created a new pet')
    const expected = { ...asked, id: pet.id, status: asked.status ?? 'available' }
    if (!isDeepStrictEqual(canonical(pet), canonical(expected))) problems.push(`the created pet is not what was asked for: expected ${JSON.stringify(expected)}`)
    if (this.pets.has(pet.id)) problems.push(`id ${pet.id} was given twice`)
    this.pets.set(pet.id, pet)
    if (idempotencyKey !== undefined && idempotencyKey !== null) this.#idempotency.set(idempotencyKey, { fingerprint: fingerprint(asked), pet })
    // readable at once, exactly as created
    const read = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets/${pet.id}`, headers: this.authHeader })
    if (read.statusCode !== 200 || !isDeepStrictEqual(canonical(read.json()), canonical(pet))) {
      problems.push(`GET ${operation.basePath}/pets/${pet.id} answered ${read.statusCode} ${shorten(read.body)} instead of the created pet`)
    }
  }

  async #checkUpdate (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): Promise<void> {
    const verdict = this.#judgeBody(request, operation, sent)
    const invalid = this.#parameterProblem(operation, sent)
    // the body is refused as it is read (415, 413, not JSON) before anything else, or as it is validated (400, as a bad id or If-Match is)
    if (verdict.kind === 'expect') return expect(invalid === undefined ? verdict.statuses : [...new Set([...verdict.statuses, 400])], verdict.why)
    if (invalid !== undefined) return expect(verdict.kind === 'unsure' ? [400, 415] : [400], invalid)
    const id = Number(sent.values.get('path:petId')?.[0])
    const pet = this.pets.get(id)
    const patch = (verdict.pet ?? {}) as Partial<Pet>
    const ifMatch = sent.headers['if-match']
    // the only tags that can match are `*` and the pet's own, resolved from getPet just before (a W/ one never: strong comparison)
    const matches = ifMatch === undefined || ifMatch.trim() === '*' || (sent.etagOf === id && !ifMatch.trim().startsWith('W/'))
    let statuses = [200]
    let why = 'a valid patch of an existing pet'
    if (pet === undefined) [statuses, why] = [[404], `no pet has id ${id}`]
    else if (!matches) [statuses, why] = [[412], 'If-Match does not hold the pet\'s current tag']
    else if (patch.status !== undefined && patch.status !== pet.status && STATUS_MOVES[pet.status]?.includes(patch.status) !== true) [statuses, why] = [[409], `${pet.status} cannot become ${patch.status}`]
    expect(verdict.kind === 'unsure' ? [...statuses, 400, 415] : statuses, why)
    if (res.statusCode !== 200 || pet === undefined) return
    const updated = res.json<Pet>()
    const expected: Pet = { id, name: patch.name ?? pet.name, categoryId: patch.categoryId ?? pet.categoryId, status: patch.status ?? pet.status }
    if (!isDeepStrictEqual(canonical(updated), canonical(expected))) problems.push(`the pet is not the one patched: expected ${JSON.stringify(expected)}`)
    this.pets.set(id, updated)
    // readable at once, with the tag the change answered
    const read = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets/${id}`, headers: this.authHeader })
    if (read.statusCode !== 200 || !isDeepStrictEqual(canonical(read.json()), canonical(updated)) || read.headers.etag !== res.headers.etag) {
      problems.push(`GET ${operation.basePath}/pets/${id} answered ${read.statusCode} ${shorten(read.body)} (ETag ${String(read.headers.etag)}) instead of the patched pet with ETag ${String(res.headers.etag)}`)
    }
  }

  /** What a create must answer, judged from the body and content type alone (the key is valid). */
  #judgeBody (request: FuzzRequest, operation: ApiOperation, sent: Sent):
    { kind: 'expect', statuses: number[], why: string } | { kind: 'valid', pet: Record<string, unknown> } | { kind: 'unsure', pet: Record<string, unknown> | undefined } {
    const contentType = classifyContentType(sent.headers['content-type'], operation.bodyMediaTypes)
    const bytes = sent.bytes
    if (sent.lengthMismatch) {
      // a declared length over the limit is refused (413) before the body is read
      const withinLimit = Math.max(bytes?.length ?? 0, Number(sent.headers['content-length'] ?? 0)) <= BODY_LIMIT_BYTES
      return { kind: 'expect', statuses: contentType === 'json' && withinLimit ? [400] : [400, 413, 415], why: 'Content-Length does not match the body' }
    }
    if (contentType === 'other' || (contentType === 'none' && bytes !== undefined && bytes.length > 0)) {
      return { kind: 'expect', statuses: bytes === undefined || bytes.length === 0 ? [400, 415] : [413, 415], why: 'the body is not application/json' }
    }
    if (bytes === undefined || bytes.length === 0) return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'no body (a chunked empty body counts as one of no type)' }
    if (bytes.length > BODY_LIMIT_BYTES) return { kind: 'expect', statuses: contentType === 'json' ? [413] : [413, 415], why: `the body has ${bytes.length} bytes` }
    let text: string
    try {
      text = UTF8.decode(bytes)
    } catch {
      return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'the body is not UTF-8' }
    }
    let value: unknown
    try {
      value = JSON.parse(text.replace(/^\ufeff/, ''))
    } catch {
      return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'the body is not JSON' }
    }
    const invalid = this.api.validate(operation.bodyPointer ?? '', value)
    if (invalid !== undefined) return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: `the body is not a valid NewPet: ${invalid}` }
    const body = request.body
    const certain = contentType === 'json' && body !== undefined && 'text' in body && body.structured
    if (certain && !body.wholeIntegers) return { kind: 'expect', statuses: [400], why: 'an integer is written with a fractional part that parsing would round away' }
    return certain ? { kind: 'valid', pet: value as Record<string, unknown> } : { kind: 'unsure', pet: value as Record<string, unknown> }
  }

  /** Every pet of the catalogue, by following `next` links from the first page of `query`; checks each page. */
  async walk (query: string, onPage?: (url: string) => void): Promise<Pet[]> {
    const operation = this.api.operation('listPets')
    const pets: Pet[] = []
    let url: string | undefined = `${operation.basePath}/pets${query}`
    for (let pages = 0; url !== undefined; pages++) {
      if (pages > 100_000) throw new Error('the next links do not end')
      onPage?.(url)
      const res = await this.app.inject({ method: 'GET', url, headers: this.authHeader })
      this.stats.count(operation.id, res.statusCode)
      const problems = this.checkConformance(operation, res, url)
      if (res.statusCode !== 200) problems.push(`a list page answered ${res.statusCode}`)
      if (problems.length > 0) throw new FuzzFailure(problems, `GET ${url}`, res)
      pets.push(...res.json<Pet[]>())
      const next = nextLink(res)
      url = next === undefined ? undefined : new URL(next).pathname + new URL(next).search
    }
    return pets
  }

  /** The whole catalogue, walked page by page, must be exactly the pets created, each once, in id order. */
  async verifyCatalogue (limit = 37): Promise<void> {
    const listed = await this.walk(`?limit=${limit}`)
    const expected = this.#sortedPets()
    if (!isDeepStrictEqual(canonical(listed), canonical(expected))) {
      const listedIds = listed.map((pet) => pet.id)
      const missing = expected.filter((pet) => !listedIds.includes(pet.id)).map((pet) => pet.id)
      throw new FuzzFailure([`walking the list (limit=${limit}) did not return exactly the ${expected.length} pets created: ${listed.length} listed, missing ids ${JSON.stringify(missing.slice(0, 20))}`], `GET /v1/pets?limit=${limit} and its next links`, undefined)
    }
  }
}

function decodeSafely (url: string): string {
  try {
    return decodeURIComponent(url)
  } catch {
    return url
  }
}

function nextLink (res: LightMyRequestResponse): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
}

/** JSON-equal values compare equal (key order and -0 do not matter). */
function canonical (value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner))
}

function fingerprint (pet: Record<string, unknown>): string {
  return JSON.stringify([pet.name, pet.categoryId, pet.status ?? 'available'])
}

/** The Idempotency-Key as the README describes it: bare or quoted, 1–255 visible ASCII without spaces, quotes or backslashes; null when malformed. */
function parseIdempotencyKeyHeader (header: string): string | null {
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header
  return /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/.test(key) ? key : null
}

/** `json`: certainly one of the body's documented JSON types in UTF-8; `other`: certainly not; `unsure`: a server may read it either way. */
function classifyContentType (header: string | undefined, mediaTypes: readonly string[]): 'json' | 'other' | 'none' | 'unsure' {
  if (header === undefined) return 'none'
  if (header.includes(',') || header.startsWith(' ')) return 'unsure'
  const [essence = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase())
  if (!mediaTypes.includes(essence)) return 'other'
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length)
  return charset === undefined || charset === 'utf-8' ? 'json' : 'unsure'
}

// ---------------------------------------------------------------------------------------------
// The properties

export interface PropertyRun {
  numRuns: number
  seed: number
  /** fast-check's replay path, to reproduce one failure directly. */
  path?: string
}

export interface PropertyResult {
  failed: boolean
  /** fast-check's report: seed, counterexample (the shrunk request), the error. */
  report: string
  cases: number
}

async function runProperty<T> (arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, run: PropertyRun, stats: FuzzStats): Promise<PropertyResult> {
  const details = await fc.check(fc.asyncProperty(arbitrary, async (value) => {
    stats.cases++
    await predicate(value)
  }), { seed: run.seed, numRuns: run.numRuns, ...(run.path === undefined ? {} : { path: run.path }), endOnFailure: false, includeErrorInReport: true })
  return { failed: details.failed, report: details.failed ? fc.defaultReportMessage(details) ?? 'failed' : '', cases: stats.cases }
}

/** Hostile (and some valid) requests to every operation; every answer checked. */
export async function fuzzHostileRequests (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  return runProperty(requestArbitrary(fuzzer.api), async (request) => { await fuzzer.send(request) }, run, fuzzer.stats)
}

export interface ValidCreate {
  request: FuzzRequest
  /** Send the create twice with one Idempotency-Key: the second must replay the first. */
  repeat: boolean
}

/** Valid creates only, each with a unique Idempotency-Key or none, and valid but varied spellings. */
export function validCreateArbitrary (api: ApiDescription): fc.Arbitrary<ValidCreate> {
  const operation = api.operation('createPet')
  const value = validValueArbitrary(api, operation.bodyPointer ?? '', operation.bodySchema ?? {}) as fc.Arbitrary<Record<string, Json>>
  let counter = 0
  return fc.record({
    pet: value,
    pretty: fc.boolean(),
    authorization: fc.constantFrom(...VALID_AUTHORIZATIONS),
    contentType: fc.constantFrom(...JSON_CONTENT_TYPES),
    idempotent: fc.boolean(),
    repeat: fc.boolean()
  }).map(({ pet, pretty, authorization, contentType, idempotent, repeat }) => ({
    repeat: idempotent && repeat,
    request: withToString({
      operation: operation.id,
      // unique per generated value, so that shrinking never reuses one by accident
      params: idempotent ? [{ in: 'header', name: 'idempotency-key', value: { kind: 'text', text: `fuzz-${Date.now().toString(36)}-${counter++}` } }] : [],
      authorization,
      contentType,
      body: { label: 'valid', text: pretty ? JSON.stringify(pet, null, 2) : JSON.stringify(pet), structured: true, wholeIntegers: true },
      contentLengthDelta: 0,
      headers: []
    })
  }))
}

/**
 * Valid creates: each is 201 with the pet asked for, readable at once (200, then 304 with its ETag),
 * and listed exactly as created (walking the status-filtered list from where the last walk ended).
 */
export async function fuzzValidCreates (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  const getPet = fuzzer.api.operation('getPet')
  // pets are appended at the end, so a walk can resume at the last page the previous walk read
  const resumeAt = new Map<string, string>()
  return runProperty(validCreateArbitrary(fuzzer.api), async ({ request, repeat }) => {
    const res = await fuzzer.send(request)
    if (res.statusCode !== 201) throw new FuzzFailure([`a valid create answered ${res.statusCode}`], describeRequest(request), res)
    const pet = res.json<Pet>()
    if (repeat) {
      const again = await fuzzer.send(request)
      if (again.statusCode !== 201 || again.headers['idempotent-replayed'] !== 'true' || again.body !== res.body) {
        throw new FuzzFailure(['a repeat with the same Idempotency-Key and body did not replay the first answer'], describeRequest(request), again)
      }
    }
    const id = { in: 'path', name: 'petId', value: { kind: 'text', text: String(pet.id) } } as const
    const read = await fuzzer.send({ operation: getPet.id, params: [id], authorization: 'Bearer {key}', contentType: undefined, body: undefined, contentLengthDelta: 0, headers: [] })
    const etag = read.headers.etag
    if (typeof etag !== 'string') throw new FuzzFailure(['getPet answered without an ETag'], `GET /v1/pets/${pet.id}`, read)
    const revalidated = await fuzzer.send({ operation: getPet.id, params: [id, { in: 'header', name: 'if-none-match', value: { kind: 'text', text: etag } }], authorization: 'Bearer {key}', contentType: undefined, body: undefined, contentLengthDelta: 0, headers: [] })
    if (revalidated.statusCode !== 304) throw new FuzzFailure([`If-None-Match with the pet's own ETag answered ${revalidated.statusCode}`], `GET /v1/pets/${pet.id}`, revalidated)
    let lastPage: string | undefined
    const listed = await fuzzer.walk(resumeAt.get(pet.status) ?? `?limit=100&status=${pet.status}`, (url) => { lastPage = url.slice(url.indexOf('?')) })
    if (lastPage !== undefined) resumeAt.set(pet.status, lastPage)
    const found = listed.filter((other) => other.id === pet.id)
    if (found.length !== 1 || !isDeepStrictEqual(canonical(found[0]), canonical(pet))) {
      throw new FuzzFailure([`the pet is listed ${found.length} times in the status=${pet.status} list${found.length === 1 ? `, as ${JSON.stringify(found[0])}` : ''}`], describeRequest(request), res)
    }
  }, run, fuzzer.stats)
}

/** Valid patches of existing pets (the status among all three, so every transition and refusal comes up), half of them with the pet's current tag in `If-Match`. */
export function validUpdateArbitrary (api: ApiDescription): fc.Arbitrary<FuzzRequest> {
  const operation = api.operation('updatePet')
  const patch = validValueArbitrary(api, operation.bodyPointer ?? '', operation.bodySchema ?? {})
  return fc.record({
    patch,
    pet: fc.nat(),
    conditional: fc.boolean(),
    authorization: fc.constantFrom(...VALID_AUTHORIZATIONS),
    contentType: fc.constantFrom(...operation.bodyMediaTypes)
  }).map(({ patch, pet, conditional, authorization, contentType }) => withToString({
    operation: operation.id,
    params: [
      { in: 'path', name: 'petId', value: { kind: 'pet', index: pet } },
      ...(conditional ? [{ in: 'header', name: 'if-match', value: { kind: 'etag', of: 'target', weak: false } } satisfies FuzzParam] : [])
    ],
    authorization,
    contentType,
    body: { label: 'valid', text: JSON.stringify(patch), structured: true, wholeIntegers: true },
    contentLengthDelta: 0,
    headers: []
  }))
}

/**
 * Valid patches: each is 200 or 409 as the lifecycle says (the model checks the pet answered and that
 * getPet reads it at once with the same tag), and after each change the lists of the old and the new
 * status are exactly the model's.
 */
export async function fuzzValidUpdates (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  return runProperty(validUpdateArbitrary(fuzzer.api), async (request) => {
    const before = new Map([...fuzzer.pets].map(([id, pet]) => [id, pet.status]))
    const res = await fuzzer.send(request)
    if (res.statusCode !== 200 && res.statusCode !== 409) throw new FuzzFailure([`a valid patch of an existing pet answered ${res.statusCode}`], describeRequest(request), res)
    if (res.statusCode !== 200) return
    const pet = res.json<Pet>()
    for (const status of new Set([before.get(pet.id), pet.status])) {
      const listed = await fuzzer.walk(`?limit=100&status=${String(status)}`)
      const expected = [...fuzzer.pets.values()].filter((other) => other.status === status).sort((a, b) => a.id - b.id)
      if (!isDeepStrictEqual(canonical(listed), canonical(expected))) {
        throw new FuzzFailure([`after the change, the status=${String(status)} list is ${JSON.stringify(listed.map((p) => p.id))}, expected ${JSON.stringify(expected.map((p) => p.id))}`], describeRequest(request), res)
      }
    }
  }, run, fuzzer.stats)
}
