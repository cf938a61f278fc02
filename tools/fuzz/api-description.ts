/**
 * The fuzzer's view of the served OpenAPI document: its operations, `$ref` resolution, and ajv
 * validators for any schema in it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { FastifyInstance } from 'fastify'
import { parseJson, stringifyJson } from '../../src/infra/json/exact-json.js'

/** A JSON value (an integer beyond 2^53 as a bigint, exactly). */
export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }
/** A JSON Schema object of the document. */
export type Schema = Record<string, unknown>

interface MediaTypeObject { schema?: Schema }
export interface ResponseObject { content?: Record<string, MediaTypeObject>, headers?: Record<string, unknown> }
export interface ParameterObject { name: string, in: string, required?: boolean, schema?: Schema }
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

// ajv's `integer` refuses a bigint, and its bounds are doubles (2^63 − 1 is none): for ajv, an int64 schema
// becomes this keyword, which holds the bounds as decimal text and compares them exactly
const INT64_KEYWORD = 'x-fuzz-int64'

function int64ForAjv (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(int64ForAjv)
  if (value === null || typeof value !== 'object') return value
  const mapped = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, int64ForAjv(inner)]))
  if (mapped.format !== 'int64') return mapped
  const { type: _type, format: _format, minimum, maximum, ...rest } = mapped
  return { ...rest, [INT64_KEYWORD]: { minimum: String(minimum as bigint | number | undefined ?? -(2n ** 63n)), maximum: String(maximum as bigint | number | undefined ?? 2n ** 63n - 1n) } }
}

function isInt64Within ({ minimum, maximum }: { minimum: string, maximum: string }, data: unknown): boolean {
  const integer = typeof data === 'bigint' || (typeof data === 'number' && Number.isInteger(data))
  return integer && data >= BigInt(minimum) && data <= BigInt(maximum)
}
const DOCUMENT_ID = 'https://petstore.fuzz/openapi.json'

export function pointerToken (token: string): string {
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
    // int32 describes the wire type; the range is the schema's minimum and maximum
    this.#ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 })
    this.#ajv.addKeyword({ keyword: INT64_KEYWORD, schemaType: 'object', validate: isInt64Within })
    this.#ajv.addSchema({ ...int64ForAjv(document) as object, $id: DOCUMENT_ID })
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

  /** Reads `GET /v1/openapi.json` from the app, exactly (int64 bounds as bigints). */
  static async load (app: FastifyInstance, url = '/v1/openapi.json'): Promise<ApiDescription> {
    const res = await app.inject({ method: 'GET', url })
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`)
    return new ApiDescription(parseJson(res.body) as OpenApiDocument)
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
    const key = `value:${stringifyJson(schema)}`
    let validate = this.#validators.get(key)
    if (validate === undefined) {
      validate = this.#ajv.compile(int64ForAjv(rebaseRefs(schema)) as object)
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
