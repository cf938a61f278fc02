import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { API_KEY_ROLE_SCOPES, API_KEY_ROLES, INSUFFICIENT_SCOPE_CHALLENGE, type ApiKeyRole } from '../keys/index.js'
import { storeWaitBoundMs, type Config } from '../../infra/config/config.js'
import { ERROR_CODES, RETRY_AFTER_SECONDS } from '../../infra/errors/catalogue.js'
import { BODY_LIMIT_BYTES, MERGE_PATCH_MEDIA_TYPES } from '../../infra/http/content-types.js'
import { REQUEST_TIMEOUT_MS } from '../../infra/http/drain.js'
import { REQUEST_ID_MAX_LENGTH } from '../../infra/http/request-id.js'
import { securityHeaders } from '../../infra/http/security.js'
import { apiTagsOf } from '../../infra/http/api-tags.js'
import { unversionedServers } from '../../infra/http/base-url.js'
import type { EventTypeCatalogue } from '../events/index.js'
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from '../idempotency/index.js'
import { AUTH_FAILURE_WINDOW_MS } from '../rate-limits/index.js'
import { DOCS_PREFIX } from './api-reference.js'
import { completeDocument, type OpenApiDocument } from './openapi-completion.js'
import { ENDPOINT_RATE_LIMIT_MAX, WEBHOOK_ENDPOINTS_MAX, webhooksDocument } from '../webhooks/index.js'
import { describeTransitions, FINAL_STATUSES, GET_PET_SUNSET_PROSE, PAGE_CACHE_MAX_AGE_MS, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PET_NAME_MAX_LENGTH } from '../pets/index.js'

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
function describeApi (config: Config, eventTypes: EventTypeCatalogue): string {
  const revocation = config.apiKeyCacheMs === 0
    ? 'a revoked key stops working at once'
    : `a revoked key stops working within ${config.apiKeyCacheMs / 1000} s on every instance`
  return `Keeps a store's catalogue of animals over HTTP with JSON bodies.

## Authentication
Every operation needs \`Authorization: Bearer <API key>\` (the scheme name is case-insensitive).
A missing, malformed, unknown or revoked key is answered with 401 and \`WWW-Authenticate: Bearer\`
before anything else is looked at, so an unauthenticated request learns nothing about pets or
about its own body. Operators issue and revoke keys with \`npx petstore keys …\`; ${revocation}.

Each key has a role, and each role may call what the roles above it in this table may:

${describeRoles()}

An operation answers a key whose role may not call it 403 \`insufficient_scope\` with
\`WWW-Authenticate: ${INSUFFICIENT_SCOPE_CHALLENGE}\`, after authentication and before its body is read or
validated; each operation's 403 names the role it needs. Operators create \`write\` keys by default; the
key the first start creates is an \`admin\` key.

## Errors
Every error answer is an \`Error\` body (\`code\`, \`message\`, \`status\`) with \`status\` equal to the
HTTP status, also for malformed JSON (400 \`malformed_json\`), a content type other than
\`application/json\` or that has a \`Content-Encoding\` (415, with \`Accept-Encoding: identity\`; \`updatePet\` also takes \`${MERGE_PATCH_MEDIA_TYPES[0]}\`), a body over
${BODY_LIMIT_BYTES} bytes (413), an unknown path (404), a method the path does not support (405, with
\`Allow\`) or that the server does not recognize at all (501), an HTTP/1.1 request without exactly one
\`Host\` header (400), a request that does not arrive within ${REQUEST_TIMEOUT_MS / 1000} s (408) and oversized headers (431). The codes are a stable set:
${ERROR_CODES.map((code) => `\`${code}\``).join(', ')}. A 400's message names the field and the problem.

## Creating pets
Types are strict: \`"5"\` is not an integer. \`name\` has 1 to ${PET_NAME_MAX_LENGTH} characters, at least one
of them visible (not Unicode White_Space or Default_Ignorable_Code_Point, so a name of only NBSP or
U+200B is blank), and no control characters or bidirectional controls (which could make a name display
as something else); \`categoryId\` must lie within ±(2^53−1) so every client holds it exactly. As in JSON
Schema, an integer is any JSON number without a fractional part (\`1.0\` is 1, \`1e2\` is 100); \`1.5\` and a
fraction that parsing would round away (\`1.0000000000000001\`) are rejected, never rounded; \`status\` defaults to
\`available\`. Bodies must be UTF-8 (another declared \`charset\` is 415). A client-supplied \`id\` or any
unknown field is rejected. The pet is written durably (fsync'd) before 201 is sent, with
\`Location: /v1/pets/{id}\`.

## Paging
\`GET /pets\` returns a bare array ordered by \`id\` ascending, at most \`limit\` (1–${PAGE_LIMIT_MAX},
default ${PAGE_LIMIT_DEFAULT}, in plain decimal digits like every integer in a query or path) pets. When more pets match, the answer carries
\`Link: <…/v1/pets?limit=…&cursor=…>; rel="next"\` (RFC 8288). Following \`next\` links returns every
matching pet exactly once, also while pets are being added. A walk filtered by \`status\` never lists a
pet twice: one whose status changes during the walk is listed once if the walk reaches it while it has
that status, else not at all; pets that keep their status are listed exactly once. Pages may be served from memory: a page always includes the pets created or changed through
the instance that answers, and may miss a pet created or changed through another instance during the last
${PAGE_CACHE_MAX_AGE_MS / 1000} s at most. Cursors are opaque and bound to the
\`status\` filter; an altered or foreign cursor is a 400 \`invalid_cursor\`.

## Paths and query parameters
A query parameter an operation does not list is a 400 \`invalid_request\` naming it (so
\`?status[]=sold\` never returns the unfiltered list); the public routes (probes, this document, the AsyncAPI one)
ignore query strings. No path ends in \`/\`: \`/v1/pets/\` is a 404 \`not_found\`, like any path
no route serves.

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

\`GET /pets/{petId}\` answers with a strong \`ETag\` (it changes when the pet does); \`If-None-Match\` with it
answers 304 without a body.

## Changing pets (beta)
\`PATCH /pets/{petId}\` (\`updatePet\`, marked \`x-stability: beta\`) takes a JSON Merge Patch (RFC 7396) of
\`name\`, \`categoryId\` and \`status\`, each with the rules of a create; \`null\`, \`id\` and unknown fields are
rejected, and \`{}\` changes nothing. A pet's status moves only so: ${describeTransitions()};
\`${FINAL_STATUSES.join('`, `')}\` is final, and setting the status a pet has changes nothing (a forbidden move is
409 \`invalid_transition\`). The answer is the whole pet with its strong \`ETag\`, the one \`getPet\` sends for it.
\`If-Match\` with that tag makes the next change conditional (412 \`precondition_failed\` when the pet changed
since): the tag is checked in the same transaction as the write, so of concurrent changes with one tag
exactly one is made. A change is durable before 200. Retrying a PATCH is safe without an
\`Idempotency-Key\`: the body states the wanted values, so a repeat changes nothing more.

## Events (beta)
\`GET /events\` (\`listEvents\`, marked \`x-stability: beta\`) is the change feed: every change of ${eventTypes.subjectsProse()} records
exactly one event (${eventTypes.prose()}; an update carries the changed fields' previous values)
in the same transaction as the change; a request that changes nothing records none; \`type\`, repeated, keeps only the
types named. Event ids increase in commit order, so a consumer keeps the last id it processed and follows the always-present \`Link: <…/v1/events?after=…>; rel="next"\`, pausing when a page is empty.
Events are kept ${config.eventRetentionDays} days on this deployment; asking for events after an id whose successors
were deleted is 410 \`events_expired\`, and the consumer must resynchronize from \`listPets\`.
\`GET /events/{eventId}\` (\`getEvent\`, beta) answers one event exactly as a page holds it (404 \`event_not_found\` for an id no
event was recorded with, 410 \`events_expired\` for one retention deleted): the event a webhook delivery or a stream message named.
The events, their schemas and the ways they are pushed (the stream, webhooks) are also described as AsyncAPI 3.0 (beta) at
\`/v1/asyncapi.json\` and \`/v1/asyncapi.yaml\`, without a key.

## Webhook endpoints (beta)
\`/webhook-endpoints\` (admin keys only) registers the HTTPS endpoints the events are POSTed to, signed as Standard Webhooks
specifies (\`v1\`, HMAC-SHA256 under the endpoint's \`whsec_\` secret, or \`v1a\`, ed25519 verified with its \`whpk_\` public key), and
manages their deliveries: each endpoint's health, its attempts, a resend of one event, a recovery of what failed in a window.
A secret is shown only in the answer that makes it (the 201, a rotation). At most ${WEBHOOK_ENDPOINTS_MAX} endpoints; \`rateLimit\`
caps the deliveries a second one is sent (1 to ${ENDPOINT_RATE_LIMIT_MAX}). An endpoint's \`ETag\` has two parts, its settings' and its
health's: \`If-Match\` on a change compares the settings alone. What a receiver gets is this document's \`webhooks\`.

## Rate limits
${describeRateLimits(config)} Failed authentications (a 401 for a malformed, unknown or revoked key;
a request without any key does not count) are limited per client address to ${config.authFailureLimit} per ${AUTH_FAILURE_WINDOW_MS / 1000} s (policy
\`failed-auth\`, whose fields a 401 carries); past that, requests from the address whose key fails get 429
instead of 401 until the window is over. A request with a valid key is always served (subject to its
key's own limit), whatever its address did. If the rate-limit store is unreachable,
requests are served unlimited and without these fields.

## Request ids and browsers
Every answer carries \`X-Request-Id\`: the request's own when it sent a valid one (1–${REQUEST_ID_MAX_LENGTH} characters of
\`A-Z a-z 0-9 . _ : @ / + = -\`), else a new UUID. Quote it when reporting a problem. ${config.corsOrigins.length === 0
    ? 'Browser calls from other origins (CORS) are not enabled on this deployment.'
    : `Browser calls (CORS) are allowed from ${config.corsOrigins.map((origin) => `\`${origin}\``).join(', ')}.`}

## Headers on every answer
Besides the headers each answer documents, every answer carries these security headers, the same
on all of them (a JSON API's: nothing may frame, sniff or cache it): ${Object.entries(securityHeaders()).map(([name, value]) => `\`${name}: ${value}\``).join(', ')}.
\`getPet\` sends its own \`Cache-Control\` (documented on its answers).

## Availability
When the database cannot be reached, operations answer 503 \`service_unavailable\` with
\`Retry-After: ${RETRY_AFTER_SECONDS}\` within a bounded time (${storeWaitBoundMs(config.database) / 1000} s at most here) instead of hanging, and the
service recovers by itself when the database is back. A 503 to \`POST /pets\` does not tell whether
the pet was stored: retry it with the same \`Idempotency-Key\` (or list the catalogue before creating it again).`
}

/** The one table of roles, from the keys capability's own. */
function describeRoles (): string {
  return ['| role | may call |', '|---|---|', ...API_KEY_ROLES.map((role) => `| \`${role}\` | ${API_KEY_ROLE_SCOPES[role]} |`)].join('\n')
}

function describeRateLimits (config: Config): string {
  if (config.rateLimitMax === 0) return 'This deployment sets no per-key request limit.'
  const shared = config.redisUrl === undefined ? 'counted by each instance' : 'counted across all instances'
  return `Each API key may make ${config.rateLimitMax} requests per ${config.rateLimitWindowMs / 1000} s (a fixed window, ${shared}). ` +
    'Every answer of an operation carries the IETF `RateLimit-Policy` and `RateLimit` fields ' +
    '(`"per-key";q=<quota>;w=<seconds>` and `"per-key";r=<remaining>;t=<seconds to reset>`); over the limit is 429 ' +
    '`rate_limited` with `Retry-After`.'
}

/** The service is proprietary: no license document to link, so the document names it with an SPDX reference (OpenAPI 3.1 `identifier`). */
export const API_LICENSE = { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' } as const

/** Who answers for the API: its reference page on this deployment, where the operator's contact belongs too. */
function apiContact (config: Config): { name: string, url: string } {
  return { name: 'Pet Store API reference', url: `${unversionedServers(config)[0]?.url.replace(/\/$/, '') ?? ''}${DOCS_PREFIX}` }
}

/** Registers @fastify/swagger; it builds the document from the schemas of the routes registered after it. */
export async function registerOpenApi (app: FastifyInstance, config: Config): Promise<void> {
  // each operation's route schema, for what the document takes from it beyond swagger (completeDocument)
  const routeSchemas = new Map<string, FastifySchema>()
  // the role each operation's route declares beyond its method's (`ADMIN_ONLY`), for its 403
  const requiredRoles = new Map<string, ApiKeyRole>()
  app.addHook('onRoute', (route) => {
    const id = route.schema?.operationId
    if (typeof id !== 'string' || route.method === 'HEAD') return
    routeSchemas.set(id, route.schema as FastifySchema)
    if (route.config?.requiredRole !== undefined) requiredRoles.set(id, route.config.requiredRole)
  })
  // x-internal: the audience of each server (OWASP API9): both serve the API's clients
  const servers = [{ url: config.publicBaseUrl, description: 'Production', 'x-internal': false }]
  if (config.stagingBaseUrl !== undefined) servers.push({ url: config.stagingBaseUrl, description: 'Staging', 'x-internal': false })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet Store', version: API_VERSION, description: describeApi(config, app.eventTypes), contact: apiContact(config), license: API_LICENSE },
      servers,
      externalDocs: { description: 'The events as AsyncAPI 3.0 (beta): the stream and webhooks, each event type a message.', url: `${config.publicBaseUrl}/asyncapi.json` },
      tags: [
        { name: 'pets', description: 'The catalogue of animals.' },
        { name: 'events', description: `The change feed: every change of ${app.eventTypes.subjectsProse()}, in commit order (beta).` },
        { name: 'store', description: 'Store orders: a beta addition to v1.' },
        { name: 'webhooks', description: 'The endpoints the events are delivered to, and their deliveries: managed by admin keys (beta).' },
        // the tags the capabilities declare themselves (registerApiTag)
        ...apiTagsOf(app),
        { name: 'operations', description: 'Health, this document and the events\' AsyncAPI document; no key needed.' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `An API key issued by the operator (\`npx petstore keys create --name … [--role ${API_KEY_ROLES.join('|')}]\`); ` +
              'its role says which operations it may call (the API\'s description has the table).'
          }
        }
      },
      security: [{ bearerAuth: [] }]
    },
    // HEAD is served wherever GET is (Fastify adds it), so the document says so: operations "<GET's id>-head"
    exposeHeadRoutes: true,
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      completeDocument(document as OpenApiDocument, { perKeyLimited: config.rateLimitMax > 0, cors: config.corsOrigins.length > 0, routeSchemas, requiredRoles })
      ;(document as { webhooks?: unknown }).webhooks = webhooksDocument(config.webhooks, app.eventTypes)
      return document
    },
    // name the components after the schemas' $id (Pet, NewPet, Error, …) instead of def-0, def-1, …
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => typeof json.$id === 'string' ? json.$id : `def-${index}`
    }
  })
}
