import { Ajv, type ErrorObject, type Options as AjvOptions, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { INT64_MAX, INT64_MIN, int64FromDecimal } from '../json/int64.js'
import { INT64_FORMAT, mapInt64Schemas } from '../schemas/int64-schema.js'
import { DEFAULT_VALUE_KEYWORD, PARAMETER_SERIALIZATION_KEYWORDS, PATTERN_DESCRIPTION_KEYWORD, STABILITY_KEYWORD } from '../schemas/keywords.js'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type BuildValidator = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>

const AJV_OPTIONS: AjvOptions = {
  useDefaults: true,
  // reject unknown fields instead of silently dropping them
  removeAdditional: false,
  // no lenient coercion: "5" is not an integer in a body, and "0x2" or "1e0" is not one in a URL
  coerceTypes: false,
  allErrors: false,
  strict: true,
  // OpenAPI 3.1's way to say "or null" (a merge patch's removal): `type: ['string', 'null']`
  allowUnionTypes: true,
  // errors carry the failing schema, so a message can use what the schema says of itself
  verbose: true,
  // the schemas are the service's own constants, checked against the JSON Schema meta-schema by a test
  // (test/http/schemas.test.ts) rather than at every start: compiling the meta-schema was a tenth of it
  validateSchema: false
}

// plain decimal digits: the only text a query or path integer may be written as
const DECIMAL_INTEGER = /^-?\d+$/

/**
 * The keyword an int64 schema becomes for ajv, whose `type: integer` refuses a bigint and whose
 * `minimum`/`maximum` cannot hold 2^63 − 1 exactly: its value is the bounds as decimal text.
 */
const INT64_KEYWORD = 'int64Range'

interface Int64Range {
  minimum: string
  maximum: string
}

// what ajv checks of an int64 schema itself, the rest (description, examples) is kept as annotations
const REPLACED_BY_INT64_KEYWORD = new Set(['type', 'format', 'minimum', 'maximum'])

/** `schema` with each int64 subschema turned into {@link INT64_KEYWORD}, which accepts a number or a bigint. */
function withInt64Keyword<T> (schema: T): T {
  return mapInt64Schemas(schema, (int64) => {
    const kept = Object.fromEntries(Object.entries(int64).filter(([keyword]) => !REPLACED_BY_INT64_KEYWORD.has(keyword)))
    const range: Int64Range = { minimum: String(int64.minimum as bigint | number | undefined ?? INT64_MIN), maximum: String(int64.maximum as bigint | number | undefined ?? INT64_MAX) }
    return { ...kept, [INT64_KEYWORD]: range }
  })
}

type Int64Validate = ((data: unknown) => boolean) & { errors?: Array<Partial<ErrorObject>> }

/**
 * The check of {@link INT64_KEYWORD}: an integer (a number without a fractional part, or a bigint) within
 * the bounds, compared exactly (mixed number and bigint comparisons are). Its errors are the `type`,
 * `minimum` and `maximum` errors ajv would give, so a 400 is worded as for any integer.
 */
function compileInt64Range (range: Int64Range): Int64Validate {
  const minimum = BigInt(range.minimum)
  const maximum = BigInt(range.maximum)
  // a safe integer is judged against the bounds as doubles (exact for it, whatever the bounds), without
  // comparing a number with a bigint, which is slower: the path of every ordinary id
  const [minimumNumber, maximumNumber] = [Number(minimum), Number(maximum)]
  const fail = (error: Partial<ErrorObject>): false => {
    validate.errors = [error]
    return false
  }
  const validate: Int64Validate = (data) => {
    if (Number.isSafeInteger(data) && (data as number) >= minimumNumber && (data as number) <= maximumNumber) return true
    // ±Infinity (a number literal too long to be exact) is whole but beyond every bound
    const integer = typeof data === 'bigint' || (typeof data === 'number' && (Number.isInteger(data) || Math.abs(data) === Infinity))
    if (!integer) return fail({ keyword: 'type', params: { type: 'integer' }, message: 'must be integer' })
    if (data < minimum) return fail({ keyword: 'minimum', params: { comparison: '>=', limit: minimum }, message: `must be >= ${minimum}` })
    if (data > maximum) return fail({ keyword: 'maximum', params: { comparison: '<=', limit: maximum }, message: `must be <= ${maximum}` })
    return true
  }
  return validate
}

interface ObjectSchema {
  properties?: Record<string, { type?: unknown, format?: unknown }>
}

/**
 * Query, path and header parameters arrive as text: the ones the schema declares integers are
 * turned into numbers when written in plain decimal (an int64 beyond 2^53 into a bigint), and left as
 * text (so they fail the type check) otherwise; a list parameter (repeated, `type=a&type=b`) given
 * once becomes a list of one.
 */
function compileParameterValidator (ajv: Ajv, schema: ObjectSchema): ValidateFunction {
  const validate = ajv.compile(withInt64Keyword(schema))
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name, property]) => ({ name, read: property.format === INT64_FORMAT ? int64FromDecimal : Number }))
  const lists = Object.entries(schema.properties ?? {}).filter(([, property]) => property.type === 'array').map(([name]) => name)
  if (integers.length === 0 && lists.length === 0) return validate
  const validateParameters = ((data: Record<string, unknown>) => {
    for (const { name, read } of integers) {
      const value = data[name]
      if (typeof value === 'string' && DECIMAL_INTEGER.test(value)) data[name] = read(value)
    }
    // a list parameter written once arrives as one string: a list of one
    for (const name of lists) {
      if (typeof data[name] === 'string') data[name] = [data[name]]
    }
    const valid = validate(data)
    validateParameters.errors = validate.errors
    return valid
  }) as ValidateFunction
  return validateParameters
}

// One Ajv per set of shared schemas, for every context and every app of the process: Fastify asks for a
// compiler per encapsulated context, and each new Ajv compiles the JSON Schema meta-schema again
// (about a tenth of start-up, docs/performance.md). The shared schemas are constants, so a set is
// known by their ids.
const ajvBySchemaSet = new Map<string, Ajv>()

function ajvFor (externalSchemas: Record<string, unknown>): Ajv {
  const key = Object.keys(externalSchemas).sort().join('\n')
  let ajv = ajvBySchemaSet.get(key)
  if (ajv === undefined) {
    ajv = createAjv(externalSchemas)
    ajvBySchemaSet.set(key, ajv)
  }
  return ajv
}

/** The service's Ajv with the shared schemas; `options` add to its own (test/http/schemas.test.ts turns the meta-schema check back on). */
export function createAjv (externalSchemas: Record<string, unknown>, options: AjvOptions = {}): Ajv {
  const ajv = new Ajv({ ...AJV_OPTIONS, ...options })
  // int32 documents the wire type for OpenAPI; the range is enforced by minimum/maximum
  ajv.addFormat('int32', { type: 'number', validate: () => true })
  // an int64 schema is rewritten into this keyword (withInt64Keyword)
  ajv.addKeyword({ keyword: INT64_KEYWORD, schemaType: 'object', errors: true, compile: (range: Int64Range) => compileInt64Range(range) })
  // words for a pattern's error message (validation-messages.ts); annotation only
  ajv.addKeyword({ keyword: PATTERN_DESCRIPTION_KEYWORD, schemaType: 'string' })
  // the value the route uses for an omitted field; annotation only (the route fills it in)
  ajv.addKeyword({ keyword: DEFAULT_VALUE_KEYWORD })
  // a field's stability marker (x-stability); annotation only
  ajv.addKeyword({ keyword: STABILITY_KEYWORD })
  // how a query parameter's list is written in the URL (OpenAPI's style and explode); annotation only
  for (const keyword of PARAMETER_SERIALIZATION_KEYWORDS) ajv.addKeyword({ keyword })
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(withInt64Keyword(schema as object))
  return ajv
}

/**
 * A validator compiled on its first call instead of at start: start-up compiled every route's, and a
 * process answers most of them never or much later (docs/performance.md#start-up).
 */
function compiledOnFirstUse (compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined
  const validate = ((data: unknown) => {
    compiled ??= compile()
    const valid = compiled(data)
    validate.errors = compiled.errors
    return valid
  }) as ValidateFunction
  return validate
}

/** The validator of one part of a route (its body, query, params or headers), compiled as the service compiles it. */
export function compileRoutePart (ajv: Ajv, schema: unknown, httpPart: string | undefined): ValidateFunction {
  if (httpPart === 'querystring' || httpPart === 'params' || httpPart === 'headers') return compileParameterValidator(ajv, schema as ObjectSchema)
  // a shared schema used whole is already compiled under its $id
  const id = (schema as { $id?: unknown }).$id
  return (typeof id === 'string' ? ajv.getSchema(id) : undefined) ?? ajv.compile(withInt64Keyword(schema as object))
}

function buildPartAwareValidator (externalSchemas: Record<string, unknown>): FastifySchemaCompiler<unknown> {
  const ajv = ajvFor(externalSchemas)
  return ({ schema, httpPart }) => compiledOnFirstUse(() => compileRoutePart(ajv, schema, httpPart))
}

// Fastify calls the factory with the shared schemas and the compiler with the route
// schema definition, but types it as Ajv's own compile function; hence the cast
export const buildValidator = buildPartAwareValidator as unknown as BuildValidator
