import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { INSUFFICIENT_SCOPE_CHALLENGE, roleNeededFor } from '../auth/roles.js'
import { storeWaitBoundMs, type Config } from '../config.js'
import { ERROR_CODES, RETRY_AFTER_SECONDS } from '../errors/catalogue.js'
import { BODY_LIMIT_BYTES } from '../http/content-types.js'
import { REQUEST_TIMEOUT_MS } from '../http/drain.js'
import { REQUEST_ID_MAX_LENGTH } from '../http/request-id.js'
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from '../idempotency/policy.js'
import { PAGE_CACHE_MAX_AGE_MS } from '../pagination/page-cache.js'
import { AUTH_FAILURE_WINDOW_MS } from '../rate-limit/register-rate-limits.js'
import { GET_PET_SUNSET_PROSE } from '../routes/get-pet-deprecation.js'
import { INSUFFICIENT_SCOPE_DESCRIPTION, INSUFFICIENT_SCOPE_HEADER, RATE_LIMIT_HEADERS, type HeaderSpec } from '../schemas/responses.js'
import { PET_NAME_MAX_LENGTH } from '../schemas/pet.js'
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../schemas/query.js'

declare module 'fastify' {
  interface FastifySchema {
    /** Servers for this operation alone (routes outside the `/v1` base). */
    servers?: ReadonlyArray<{ url: string, description?: string }>
    /** Stability marker shown by documentation tools: `experimental` or `beta`. */
    'x-stability'?: 'experimental' | 'beta'
    /** Documentation tools disable the interactive test panel of this operation. */
    'x-hideTryItPanel'?: boolean
    /** Removal date (YYYY-MM-DD) of a deprecated operation. */
    'x-deprecated-sunset'?: string
  }
}

export const API_VERSION = '1.0.0'

/** The API's description; the revocation delay depends on the deployment's key cache. */
function describeApi (config: Config): string {
  const revocation = config.apiKeyCacheMs === 0
    ? 'a revoked key stops working at once'
    : `a revoked key stops working within ${config.apiKeyCacheMs / 1000} s on every instance`
  return `Keeps a store's catalogue of animals over HTTP with JSON bodies.

## Authentication
Every operation needs \`Authorization: Bearer <API key>\` (the scheme name is case-insensitive).
A missing, malformed, unknown or revoked key is answered with 401 and \`WWW-Authenticate: Bearer\`
before anything else is looked at, so an unauthenticated request learns nothing about pets or
about its own body. Operators issue and revoke keys with \`npx petstore keys …\`; ${revocation}.

Each key has a role. A \`write\` key (the default) may call every operation; a \`read\` key (a storefront's,
say) may call the operations that only read (\`GET\`). An operation that writes answers a \`read\` key
403 \`insufficient_scope\` with \`WWW-Authenticate: ${INSUFFICIENT_SCOPE_CHALLENGE}\`, after authentication
and before its body is read or validated.

## Errors
Every error answer is an \`Error\` body (\`code\`, \`message\`, \`status\`) with \`status\` equal to the
HTTP status, also for malformed JSON (400 \`malformed_json\`), a content type other than
\`application/json\` (415), a body over ${BODY_LIMIT_BYTES} bytes (413), an unknown path (404) and a
method the path does not support (405, with \`Allow\`), a request that does not arrive within
${REQUEST_TIMEOUT_MS / 1000} s (408) and oversized headers (431). The codes are a stable set:
${ERROR_CODES.map((code) => `\`${code}\``).join(', ')}. A 400's message names the field and the problem.

## Creating pets
Types are strict: \`"5"\` is not an integer. \`name\` has 1 to ${PET_NAME_MAX_LENGTH} characters of
printable text; \`categoryId\` must lie within ±(2^53−1) so every client holds it exactly, and be
written as a plain integer (\`1.0\`, \`1e2\` are rejected, never rounded); \`status\` defaults to
\`available\`. Bodies must be UTF-8 (another declared \`charset\` is 415). A client-supplied \`id\` or any
unknown field is rejected. The pet is written durably (fsync'd) before 201 is sent, with
\`Location: /v1/pets/{id}\`.

## Paging
\`GET /pets\` returns a bare array ordered by \`id\` ascending, at most \`limit\` (1–${PAGE_LIMIT_MAX},
default ${PAGE_LIMIT_DEFAULT}, in plain decimal digits like every integer in a query or path) pets. When more pets match, the answer carries
\`Link: <…/v1/pets?limit=…&cursor=…>; rel="next"\` (RFC 8288). Following \`next\` links returns every
matching pet exactly once, also while pets are being added. Pages may be served from memory: a
page always includes the pets created through the instance that answers, and may miss one created
through another instance during the last ${PAGE_CACHE_MAX_AGE_MS / 1000} s at most. Cursors are opaque and bound to the
\`status\` filter; an altered or foreign cursor is a 400 \`invalid_cursor\`. Unknown query
parameters are ignored.

## Deprecation
\`GET /pets/{petId}\` is deprecated and is removed on ${GET_PET_SUNSET_PROSE}: its answers carry
\`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and \`Link: <…/v1/pets>; rel="successor-version"\`,
and from the sunset instant on it answers 410 \`gone\`. Use \`GET /pets\` with the \`status\` filter.

## Safe retries
\`POST /pets\` takes an optional \`Idempotency-Key\` header (IETF httpapi draft): a unique value per new
pet, such as a UUID (1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters, bare or as a quoted string). The first request
with a key is processed. A repeat with the same key and the same body (compared by meaning: key order,
spacing and an omitted default \`status\` do not matter), from the same API key within ${IDEMPOTENCY_TTL_MS / 3_600_000} hours, gets the
first answer again with \`Idempotent-Replayed: true\` and creates nothing. The same key with another
body is 422 \`idempotency_key_reused\`; a repeat while the first is still being processed is 409
\`idempotency_request_in_progress\` (retry after \`Retry-After\`). Keys belong to the API key that sent
them and hold across restarts and instances; a request that failed (400, 503) does not use its key up.
So a client that retries a timed-out create with its key never makes a duplicate pet.

\`GET /pets/{petId}\` answers with a strong \`ETag\`; \`If-None-Match\` with it answers 304 without a body.

## Rate limits
${describeRateLimits(config)} Failed authentications (a 401 for a malformed, unknown or revoked key;
a request without any key does not count) are limited per client address to ${config.authFailureLimit} per ${AUTH_FAILURE_WINDOW_MS / 1000} s (policy
\`failed-auth\`, whose fields a 401 carries); past that, requests from the address get 429 before any
key is checked, valid or not, until the window is over. If the rate-limit store is unreachable,
requests are served unlimited and without these fields.

## Request ids and browsers
Every answer carries \`X-Request-Id\`: the request's own when it sent a valid one (1–${REQUEST_ID_MAX_LENGTH} characters of
\`A-Z a-z 0-9 . _ : @ / + = -\`), else a new UUID. Quote it when reporting a problem. ${config.corsOrigins.length === 0
    ? 'Browser calls from other origins (CORS) are not enabled on this deployment.'
    : `Browser calls (CORS) are allowed from ${config.corsOrigins.map((origin) => `\`${origin}\``).join(', ')}.`}

## Availability
When the database cannot be reached, operations answer 503 \`service_unavailable\` with
\`Retry-After: ${RETRY_AFTER_SECONDS}\` within a bounded time (${storeWaitBoundMs(config.database) / 1000} s at most here) instead of hanging, and the
service recovers by itself when the database is back. A 503 to \`POST /pets\` does not tell whether
the pet was stored: retry it with the same \`Idempotency-Key\` (or list the catalogue before creating it again).`
}

function describeRateLimits (config: Config): string {
  if (config.rateLimitMax === 0) return 'This deployment sets no per-key request limit.'
  const shared = config.redisUrl === undefined ? 'counted by each instance' : 'counted across all instances'
  return `Each API key may make ${config.rateLimitMax} requests per ${config.rateLimitWindowMs / 1000} s (a fixed window, ${shared}). ` +
    'Every answer of an operation carries the IETF `RateLimit-Policy` and `RateLimit` fields ' +
    '(`"per-key";q=<quota>;w=<seconds>` and `"per-key";r=<remaining>;t=<seconds to reset>`); over the limit is 429 ' +
    '`rate_limited` with `Retry-After`.'
}

// on every answer: the request id; on every answer of an operation that takes a key: the rate-limit fields
const REQUEST_ID_HEADER_SPEC: HeaderSpec = { type: 'string', description: 'The request\'s id: the valid `X-Request-Id` it sent, else a new UUID.' }

type Response = { description?: string, headers?: Record<string, unknown>, content?: unknown, 'x-stability'?: string }
type Operation = { security?: unknown[], responses?: Record<string, Response> }
type OpenApiDocument = { paths?: Record<string, Record<string, Operation>> }

function toOpenApiHeaders (specs: Record<string, HeaderSpec>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(specs).map(([name, { type, description, example }]) =>
    [name, { description, schema: { type, ...(example === undefined ? {} : { example }) } }]))
}

function isAuthenticated (operation: Operation): boolean {
  return operation.security === undefined || operation.security.length > 0
}

/**
 * Adds the 403 `insufficient_scope` to every authenticated operation that writes, decided by its
 * method as the role check decides it, so an operation added later is documented by construction.
 */
function addInsufficientScopeResponses (document: OpenApiDocument): void {
  for (const path of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(path)) {
      if (!isAuthenticated(operation) || roleNeededFor(method.toUpperCase()) !== 'write') continue
      operation.responses = {
        ...operation.responses,
        403: {
          description: INSUFFICIENT_SCOPE_DESCRIPTION,
          // an addition to the interface (key roles), marked as the specification marks additions
          'x-stability': 'beta',
          headers: toOpenApiHeaders({ 'WWW-Authenticate': INSUFFICIENT_SCOPE_HEADER }),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
        }
      }
    }
  }
}

/** Adds the headers every answer carries to each response of the document, so they are written once. */
function addCommonResponseHeaders (document: OpenApiDocument, rateLimited: boolean): void {
  for (const path of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(path)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const extra: Record<string, HeaderSpec> = { 'X-Request-Id': REQUEST_ID_HEADER_SPEC }
        if (isAuthenticated(operation) && rateLimited) Object.assign(extra, RATE_LIMIT_HEADERS)
        response.headers = { ...response.headers, ...toOpenApiHeaders(extra) }
      }
    }
  }
}

/** Registers @fastify/swagger; it builds the document from the schemas of the routes registered after it. */
export async function registerOpenApi (app: FastifyInstance, config: Config): Promise<void> {
  const servers = [{ url: config.publicBaseUrl, description: 'Production' }]
  if (config.stagingBaseUrl !== undefined) servers.push({ url: config.stagingBaseUrl, description: 'Staging' })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet Store', version: API_VERSION, description: describeApi(config) },
      servers,
      tags: [
        { name: 'pets', description: 'The catalogue of animals.' },
        { name: 'store', description: 'Store orders (not shown in v1).' },
        { name: 'operations', description: 'Health and this document; no key needed.' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key issued by the operator (`npx petstore keys create --name … [--role read|write]`); a `read` key may call only the operations that read.'
          }
        }
      },
      security: [{ bearerAuth: [] }]
    },
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      addInsufficientScopeResponses(document as OpenApiDocument)
      addCommonResponseHeaders(document as OpenApiDocument, config.rateLimitMax > 0)
      return document
    },
    // name the components after the schemas' $id (Pet, NewPet, Error, …) instead of def-0, def-1, …
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => typeof json.$id === 'string' ? json.$id : `def-${index}`
    }
  })
}

/** The servers for routes that live beside `/v1` rather than under it (health checks, …). */
export function unversionedServers (config: Config): Array<{ url: string, description: string }> {
  const withoutVersion = (url: string): string => url.slice(0, -'/v1'.length) || '/'
  const servers = [{ url: withoutVersion(config.publicBaseUrl), description: 'Production' }]
  if (config.stagingBaseUrl !== undefined) servers.push({ url: withoutVersion(config.stagingBaseUrl), description: 'Staging' })
  return servers
}
