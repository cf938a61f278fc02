import type { FastifySchema } from 'fastify'
import { insufficientScopeDescription, insufficientScopeMessage, roleNeededFor, rolesBelow, type ApiKeyRole } from '../keys/index.js'
import { REQUEST_ID_MAX_LENGTH, REQUEST_ID_PATTERN } from '../../infra/http/request-id.js'
import { CORS_EXPOSED_HEADERS } from '../../infra/http/security.js'
import { PARAMETER_SERIALIZATION_KEYWORDS } from '../../infra/schemas/keywords.js'
import { errorExample, headerObject, INSUFFICIENT_SCOPE_HEADER, RATE_LIMIT_HEADERS, type HeaderSpec } from '../../infra/schemas/responses.js'

// on every answer: the request id; on every answer of an operation that takes a key: the rate-limit fields
const REQUEST_ID_HEADER_SPEC: HeaderSpec = {
  type: 'string',
  description: 'The request\'s id: the valid `X-Request-Id` it sent, else a new UUID.',
  pattern: REQUEST_ID_PATTERN,
  maxLength: REQUEST_ID_MAX_LENGTH,
  example: '0f8fad5b-d9cb-469f-a165-70867728950e'
}

// on every answer when CORS is on (CORS_ORIGINS): what @fastify/cors sends a browser
const CORS_HEADERS: Record<string, HeaderSpec> = {
  'Access-Control-Allow-Origin': { type: 'string', description: 'CORS: the request\'s `Origin`, when it is one of the allowed origins (or `*` when any is).', pattern: '^(\\*|https?://[^/\\s]+)$', maxLength: 2048, example: 'https://app.example.org' },
  'Access-Control-Expose-Headers': { type: 'string', description: 'CORS: the answer\'s headers a browser script may read.', enum: [CORS_EXPOSED_HEADERS.join(', ')], example: CORS_EXPOSED_HEADERS.join(', ') },
  Vary: { type: 'string', description: 'CORS: the answer depends on the request\'s `Origin`.', enum: ['Origin'], example: 'Origin' }
}

interface MediaType { schema?: unknown, example?: unknown, examples?: unknown }
interface Response { description?: string, headers?: Record<string, unknown>, content?: Record<string, MediaType>, 'x-stability'?: string }
interface Parameter { schema?: Record<string, unknown>, [keyword: string]: unknown }
interface Operation {
  operationId?: string
  parameters?: Parameter[]
  security?: unknown[]
  requestBody?: { content?: Record<string, MediaType> }
  responses?: Record<string, Response>
}
/** The parts of the OpenAPI document completed here. */
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>
  components?: { headers?: Record<string, unknown>, schemas?: Record<string, WithExamples> }
}

/** What a route schema may say about its examples: `examples` (JSON Schema's list) or `x-examples` (named, as OpenAPI's media type has them). */
interface WithExamples { examples?: unknown[], 'x-examples'?: Record<string, unknown> }

export interface CompletionOptions {
  /** Whether the per-key rate limit is on (its fields are then on every answer of an operation). */
  perKeyLimited: boolean
  /** Whether CORS is on (its fields are then on every answer). */
  cors: boolean
  /** Each operation's route schema, by operation id. */
  routeSchemas: ReadonlyMap<string, FastifySchema>
  /** The role an operation's route declares (`config.requiredRole`), by operation id, where it declares one. */
  requiredRoles: ReadonlyMap<string, ApiKeyRole>
}

/**
 * What @fastify/swagger leaves out of the document, added in one pass:
 * - the headers answers carry besides their own, written once under `components.headers`:
 *   `X-Request-Id` on every answer, and the CORS fields when CORS is on; on an operation that takes a key, the per-key rate-limit
 *   fields (when that limit is on) and, on its 401 and 429, the failed-auth policy's;
 * - the examples of request bodies and of responses whose schema is a `$ref` (swagger drops
 *   the siblings of a `$ref`), from the route schemas' `examples` and `x-examples`;
 * - HEAD operations answer without a body, so their responses have no content;
 * - the 403 `insufficient_scope` on every authenticated operation a key's role may not call, decided as the
 *   role check decides it (by method, raised by the route's `config.requiredRole`), so an operation added later
 *   is documented by construction, its description naming the role it needs;
 * - a query parameter's `style` and `explode`, which swagger leaves in its schema, on the parameter.
 */
export function completeDocument (document: OpenApiDocument, options: CompletionOptions): void {
  const common = { 'X-Request-Id': REQUEST_ID_HEADER_SPEC, ...RATE_LIMIT_HEADERS, ...(options.cors ? CORS_HEADERS : {}) }
  document.components = { ...document.components, headers: Object.fromEntries(Object.entries(common).map(([name, spec]) => [name, headerObject(spec)])) }
  const componentExample = (media: MediaType): unknown => {
    const ref = (media.schema as { $ref?: unknown } | undefined)?.$ref
    const name = typeof ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1] : undefined
    return name === undefined ? undefined : document.components?.schemas?.[name]?.examples?.[0]
  }
  for (const item of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const operationId = operation.operationId?.replace(/-head$/, '') ?? ''
      const routeSchema = options.routeSchemas.get(operationId)
      addBodyExample(operation, routeSchema?.body as WithExamples | undefined, componentExample)
      for (const parameter of operation.parameters ?? []) liftSerialization(parameter)
      const authenticated = operation.security === undefined || operation.security.length > 0
      const needed = roleNeededFor(method.toUpperCase(), options.requiredRoles.get(operationId))
      if (authenticated && needed !== 'read') operation.responses = { ...operation.responses, 403: insufficientScopeResponse(needed, operationId) }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const names = ['X-Request-Id', ...(options.cors ? Object.keys(CORS_HEADERS) : [])]
        if (authenticated && (options.perKeyLimited || status === '401' || status === '429')) names.push(...Object.keys(RATE_LIMIT_HEADERS))
        response.headers = { ...response.headers, ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])) }
        if (method === 'head') {
          delete response.content
          continue
        }
        addResponseExamples(response, (routeSchema?.response as Record<string, WithExamples> | undefined)?.[status], componentExample)
      }
    }
  }
}

function liftSerialization (parameter: Parameter): void {
  for (const keyword of PARAMETER_SERIALIZATION_KEYWORDS) {
    if (parameter.schema === undefined || !(keyword in parameter.schema)) continue
    parameter[keyword] = parameter.schema[keyword]
    delete parameter.schema[keyword]
  }
}

/** The 403 `insufficient_scope` of an operation that needs `needed`: an addition to the interface (key roles), marked as the specification marks additions. */
function insufficientScopeResponse (needed: ApiKeyRole, operationId: string): Response {
  // the example: what the highest role below the one needed is told
  const refused = rolesBelow(needed).at(-1) ?? 'read'
  return {
    description: insufficientScopeDescription(needed),
    'x-stability': 'beta',
    headers: { 'WWW-Authenticate': headerObject(INSUFFICIENT_SCOPE_HEADER) },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: { insufficient_scope: { summary: 'insufficient_scope', value: errorExample('insufficient_scope', insufficientScopeMessage(refused, needed, operationId)) } }
      }
    }
  }
}

/** The first of a media type's own schema examples, or of the component it refers to. */
type ExampleOf = (media: MediaType) => unknown

function addBodyExample (operation: Operation, body: WithExamples | undefined, exampleOf: ExampleOf): void {
  for (const media of Object.values(operation.requestBody?.content ?? {})) media.example ??= body?.examples?.[0] ?? exampleOf(media)
}

function addResponseExamples (response: Response, schema: WithExamples | undefined, exampleOf: ExampleOf): void {
  for (const media of Object.values(response.content ?? {})) {
    if (media.example !== undefined || media.examples !== undefined) continue
    if (schema?.['x-examples'] !== undefined) media.examples = schema['x-examples']
    else media.example = schema?.examples?.[0] ?? exampleOf(media)
  }
}
