import { Ajv, type Options as AjvOptions, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { DEFAULT_VALUE_KEYWORD, PATTERN_DESCRIPTION_KEYWORD } from '../schemas/keywords.js'

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
  // errors carry the failing schema, so a message can use what the schema says of itself
  verbose: true,
  // the schemas are the service's own constants, checked against the JSON Schema meta-schema by a test
  // (test/http/schemas.test.ts) rather than at every start: compiling the meta-schema was a tenth of it
  validateSchema: false
}

// plain decimal digits: the only text a query or path integer may be written as
const DECIMAL_INTEGER = /^-?\d+$/

interface ObjectSchema {
  properties?: Record<string, { type?: unknown }>
}

/**
 * Query and path parameters arrive as text: the ones the schema declares integers are
 * turned into numbers when written in plain decimal, and left as text (so they fail
 * the type check) otherwise.
 */
function compileParameterValidator (ajv: Ajv, schema: ObjectSchema): ValidateFunction {
  const validate = ajv.compile(schema)
  const integerNames = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name)
  if (integerNames.length === 0) return validate
  const validateParameters = ((data: Record<string, unknown>) => {
    for (const name of integerNames) {
      const value = data[name]
      if (typeof value === 'string' && DECIMAL_INTEGER.test(value)) data[name] = Number(value)
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

/** The service's Ajv with the shared schemas; `options` add to its own (a test turns the meta-schema check back on). */
export function createAjv (externalSchemas: Record<string, unknown>, options: AjvOptions = {}): Ajv {
  const ajv = new Ajv({ ...AJV_OPTIONS, ...options })
  // int32 and int64 document the wire type for OpenAPI; the range is enforced by minimum/maximum
  ajv.addFormat('int32', { type: 'number', validate: () => true })
  ajv.addFormat('int64', { type: 'number', validate: () => true })
  // words for a pattern's error message (validation-messages.ts); annotation only
  ajv.addKeyword({ keyword: PATTERN_DESCRIPTION_KEYWORD, schemaType: 'string' })
  // the value the route uses for an omitted field; annotation only (the route fills it in)
  ajv.addKeyword({ keyword: DEFAULT_VALUE_KEYWORD })
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object)
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

function buildPartAwareValidator (externalSchemas: Record<string, unknown>): FastifySchemaCompiler<unknown> {
  const ajv = ajvFor(externalSchemas)
  return ({ schema, httpPart }) => compiledOnFirstUse(() => {
    if (httpPart === 'querystring' || httpPart === 'params') return compileParameterValidator(ajv, schema as ObjectSchema)
    // a shared schema used whole is already compiled under its $id
    const id = (schema as { $id?: unknown }).$id
    return (typeof id === 'string' ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema as object)
  })
}

// Fastify calls the factory with the shared schemas and the compiler with the route
// schema definition, but types it as Ajv's own compile function; hence the cast
export const buildValidator = buildPartAwareValidator as unknown as BuildValidator
