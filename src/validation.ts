import { Ajv, type Options as AjvOptions } from 'ajv'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type BuildValidator = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>

const COMMON_OPTIONS: AjvOptions = {
  useDefaults: true,
  // reject unknown fields instead of silently dropping them
  removeAdditional: false,
  allErrors: false,
  strict: true
}

function createAjv (coerceTypes: boolean, externalSchemas: Record<string, unknown>): Ajv {
  const ajv = new Ajv({ ...COMMON_OPTIONS, coerceTypes })
  // int64 documents the wire type for OpenAPI; the range is enforced by minimum/maximum
  ajv.addFormat('int64', { type: 'number', validate: () => true })
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object)
  return ajv
}

/**
 * Validators per request part: bodies are strict JSON (`"5"` is not an integer),
 * while query and path parameters, which are always text, are coerced to their types.
 */
function buildPartAwareValidator (externalSchemas: Record<string, unknown>): FastifySchemaCompiler<unknown> {
  const strict = createAjv(false, externalSchemas)
  const coercing = createAjv(true, externalSchemas)
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    // a shared schema used whole is already compiled under its $id
    const id = (schema as { $id?: unknown }).$id
    return (typeof id === 'string' ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema as object)
  }
}

// Fastify calls the factory with the shared schemas and the compiler with the route
// schema definition, but types it as Ajv's own compile function; hence the cast
export const buildValidator = buildPartAwareValidator as unknown as BuildValidator
