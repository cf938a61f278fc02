import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { ACCEPT_ENCODING_HEADER } from '../../infra/http/content-types.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { nextLinkHeader, pagedListBadRequest, PAGE_LIMIT_DEFAULT } from '../../infra/http/paged-list.js'
import { answerConditionalGet, ifNoneMatchHeaderSchema } from '../../infra/http/tagged-answers.js'
import { stringifyJson } from '../../infra/json/exact-json.js'
import { commonErrorResponses, errorResponse, ETAG_HEADER, RETRY_AFTER_HEADER, type HeaderSpec } from '../../infra/schemas/responses.js'
import { fingerprintOf, idempotencyKeyHeaderSchema } from '../idempotency/index.js'
import { ADMIN_ONLY } from '../keys/index.js'
import endpointActions from './endpoint-action-routes.js'
import { WEBHOOK_ENDPOINTS_MAX } from './endpoint-limits.js'
import { ENDPOINT_TAGGING, endpointTag } from './endpoint-tags.js'
import { checkedAsRequest, endpointIdOf, endpointNotFound, endpointView } from './endpoint-view.js'
import updateEndpoint from './update-endpoint-route.js'
import { WebhookAudit } from './webhook-audit.js'
import { ENDPOINT_EXAMPLE, EndpointIdParamsSchema, webhookEndpointSchemas, type CreatedWebhookEndpointView } from './webhook-endpoint-schemas.js'
import { addEndpoint, checkEndpointRequest } from './webhook-endpoints.js'
import { ListWebhookEndpointsQuerySchema } from './webhook-lists.js'

/** An endpoint's tag: its settings' part (which a PATCH's `If-Match` compares), then its health's. */
export const ENDPOINT_ETAG_HEADER: HeaderSpec = {
  type: 'string',
  description: 'Strong entity tag of the endpoint, in two parts: its settings\' and its health\'s. It changes whenever either does (so `If-None-Match` answers 304 ' +
    'only while neither changed); `If-Match` on `updateWebhookEndpoint` compares the settings\' part alone, since every delivery changes the health.',
  pattern: '^"[A-Za-z0-9_-]{54}"$',
  maxLength: 56,
  example: '"OwlCk7E2ckJkk5U3nrFfO958dmF9tEg99Lp8LxZJUIHQuIbqNTEf5d"'
}

/**
 * `/webhook-endpoints` (beta, admin keys only): register, list, read, change and delete the endpoints the events
 * are delivered to, and act on their deliveries; the rules are the CLI's (webhook-endpoints.ts). Each change is audited.
 */
const webhookEndpointsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const audit = new WebhookAudit(app.metrics.registry)
  const known = app.eventTypes.types
  const list = app.webhookEndpointList
  // the components the webhooks capability registered, referred to by their $id (typed by their schemas)
  const { NewWebhookEndpoint } = webhookEndpointSchemas(known)

  app.post('/webhook-endpoints', {
    config: { ...ADMIN_ONLY },
    schema: {
      operationId: 'createWebhookEndpoint',
      tags: ['webhooks'],
      summary: 'Register a webhook endpoint (beta)',
      description: 'Registers an endpoint for the event types it names; only events recorded from now on are sent to it, each POSTed as the feed shows it and signed ' +
        '(Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer carries what its receiver verifies requests with, once: ' +
        'the `secret` of an `hmac-sha256` endpoint, the `publicKey` of an `ed25519` one. The URL is checked as at every delivery (https, public addresses ' +
        `only); a URL already registered is 409 \`webhook_endpoint_exists\`; at most ${WEBHOOK_ENDPOINTS_MAX} endpoints (409 \`webhook_endpoint_limit_reached\`). ` +
        'Takes an `Idempotency-Key`, as `createPet` does. Admin keys only.',
      'x-stability': 'beta',
      headers: Type.Object({ 'idempotency-key': Type.Optional(idempotencyKeyHeaderSchema('endpoint')) }),
      body: Type.Ref(NewWebhookEndpoint),
      response: {
        201: {
          ...Type.Ref('CreatedWebhookEndpoint'),
          description: 'Endpoint registered (or, for a repeated `Idempotency-Key`, the answer the first request got).',
          headers: {
            Location: { type: 'string', description: 'Path of the new endpoint: `/v1/webhook-endpoints/{id}`.', pattern: '^/v1/webhook-endpoints/[1-9][0-9]{0,15}$', maxLength: 38, example: '/v1/webhook-endpoints/3' },
            ETag: { ...ENDPOINT_ETAG_HEADER, description: 'The endpoint\'s tag as `getWebhookEndpoint` gives it: send it in `If-Match` to make an `updateWebhookEndpoint` conditional.' },
            'Idempotent-Replayed': { type: 'string', description: '`true` when this answer is a replay of an earlier request with the same `Idempotency-Key`; nothing new was registered.', enum: ['true'], example: 'true' }
          }
        },
        400: errorResponse('The body is missing `url` or `events`, has an invalid value (an event type the feed does not carry, no event type, a `rateLimit` out of range, ' +
          'a URL refused by the address rules: the message names the field) or an unknown field, or the `Idempotency-Key` header is malformed (`invalid_request`); ' +
          'or the body is not JSON (`malformed_json`).', undefined, { invalid_request: 'body: field "url" is refused: 10.1.2.3 is in 10.0.0.0/8, Private-Use' }),
        409: errorResponse('The URL is registered already (`webhook_endpoint_exists`; change that endpoint instead), the most endpoints are registered ' +
          '(`webhook_endpoint_limit_reached`), or a request with the same `Idempotency-Key` is still being processed (`idempotency_request_in_progress`). Nothing was registered.',
        { 'Retry-After': RETRY_AFTER_HEADER }, { webhook_endpoint_exists: `${ENDPOINT_EXAMPLE.url} is registered already as webhook endpoint ${ENDPOINT_EXAMPLE.id}.` }),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8, or it has a `Content-Encoding` (`unsupported_media_type`).', { 'Accept-Encoding': ACCEPT_ENCODING_HEADER }),
        422: errorResponse('The `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).'),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const body = request.body
    const checked = await checkedAsRequest(async () => await checkEndpointRequest(body, app.config.webhooks, known))
    const fingerprint = (): string => fingerprintOf(['createWebhookEndpoint', checked.url.href, checked.eventTypes, checked.name, checked.description ?? null,
      checked.rateLimit ?? null, checked.signing, checked.disabled])
    const created = await app.idempotentCreates.createOnce(request, reply, fingerprint, async (completing): Promise<CreatedWebhookEndpointView> => {
      const answerOf = ({ endpoint, secret }: { endpoint: Parameters<typeof endpointView>[0], secret: string | undefined }): CreatedWebhookEndpointView =>
        ({ ...endpointView(endpoint), ...(secret === undefined ? {} : { secret }) })
      const added = await addEndpoint(app.webhookStore, checked, new Date(app.clock.now()), {
        reenable: false,
        ...(completing === undefined ? {} : { completing: { claim: completing, answer: (done) => stringifyJson(answerOf(done)) } })
      })
      switch (added.outcome) {
        case 'limit-reached': throw new ApiError('webhook_endpoint_limit_reached', `${added.limit} webhook endpoints are registered, the most there may be: delete one first.`)
        case 'already-registered':
        case 're-enabled':
          throw new ApiError('webhook_endpoint_exists', `${added.endpoint.url} is registered already as webhook endpoint ${added.endpoint.id}: change that one (PATCH /v1/webhook-endpoints/${added.endpoint.id}).`)
        case 'added':
          audit.record(request, 'created', added.endpoint.id, { url: added.endpoint.url, events: added.endpoint.eventTypes, signing: added.endpoint.signing, rateLimit: added.endpoint.rateLimit })
          return answerOf(added)
      }
    })
    const { secret: _secret, ...endpoint } = created
    return reply.header('location', `/v1/webhook-endpoints/${created.id}`).header('etag', endpointTag(endpoint)).send(created)
  })

  app.get('/webhook-endpoints', {
    config: { ...ADMIN_ONLY },
    schema: {
      operationId: 'listWebhookEndpoints',
      tags: ['webhooks'],
      summary: 'List webhook endpoints (beta)',
      description: 'Returns at most `limit` endpoints in `id` order, each with its health (deliveries waiting and given up, the last success and failure), never a secret. ' +
        'When more exist, a `Link: <…>; rel="next"` header points at the next page. Admin keys only.',
      'x-stability': 'beta',
      querystring: ListWebhookEndpointsQuerySchema,
      headers: Type.Object({ 'if-none-match': Type.Optional(ifNoneMatchHeaderSchema()) }),
      response: {
        200: { ...Type.Ref('WebhookEndpoints'), description: 'A page of endpoints (a bare array).', headers: { Link: nextLinkHeader('/webhook-endpoints', 'endpoints'), ETag: ETAG_HEADER } },
        304: { type: 'null', description: 'The page still matches the `If-None-Match` tag; no body.', headers: { ETag: { ...ETAG_HEADER, description: 'The matching entity tag.' } } },
        400: pagedListBadRequest([]),
        ...commonErrorResponses()
      }
    },
    onSend: (request, reply, payload, done) => { done(null, answerConditionalGet(request, reply, payload)) }
  }, async (request, reply) => {
    const { limit = PAGE_LIMIT_DEFAULT, cursor } = request.query
    const after = list.after(cursor, {})
    const endpoints = await app.webhookStore.listWebhookEndpoints({ afterId: after ?? 0, limit: limit + 1 })
    const page = endpoints.slice(0, limit)
    const last = page.at(-1)
    if (endpoints.length > limit && last !== undefined) reply.header('link', list.nextLink(baseUrlFor(app.config, request.host), limit, {}, last.id))
    return page.map(endpointView)
  })

  app.get('/webhook-endpoints/:endpointId', {
    config: { ...ADMIN_ONLY },
    schema: {
      operationId: 'getWebhookEndpoint',
      tags: ['webhooks'],
      summary: 'Get a webhook endpoint (beta)',
      description: 'Returns the endpoint with its health and its `ETag`, never its secret; with `If-None-Match` holding that tag, 304 while neither its settings nor its health changed. Admin keys only.',
      'x-stability': 'beta',
      params: EndpointIdParamsSchema,
      headers: Type.Object({ 'if-none-match': Type.Optional(ifNoneMatchHeaderSchema()) }),
      response: {
        200: { ...Type.Ref('WebhookEndpoint'), description: 'The endpoint.', headers: { ETag: ENDPOINT_ETAG_HEADER } },
        304: { type: 'null', description: 'The endpoint still matches the `If-None-Match` tag; no body.', headers: { ETag: { ...ENDPOINT_ETAG_HEADER, description: 'The matching entity tag.' } } },
        400: errorResponse('`endpointId` is not a positive integer, or a query parameter was sent (`invalid_request`).', undefined, { invalid_request: 'path parameter "endpointId" must be >= 1' }),
        404: errorResponse('No endpoint has this id (`webhook_endpoint_not_found`).', undefined, { webhook_endpoint_not_found: `No webhook endpoint has id ${ENDPOINT_EXAMPLE.id}.` }),
        ...commonErrorResponses()
      }
    },
    onSend: (request, reply, payload, done) => { done(null, answerConditionalGet(request, reply, payload, undefined, ENDPOINT_TAGGING)) }
  }, async (request) => {
    const id = endpointIdOf(request.params.endpointId)
    const endpoint = id === undefined ? undefined : await app.webhookStore.findWebhookEndpoint(id)
    if (endpoint === undefined) throw endpointNotFound(request.params.endpointId)
    return endpointView(endpoint)
  })

  app.delete('/webhook-endpoints/:endpointId', {
    config: { ...ADMIN_ONLY },
    schema: {
      operationId: 'deleteWebhookEndpoint',
      tags: ['webhooks'],
      summary: 'Delete a webhook endpoint (beta)',
      description: 'Deletes the endpoint with its waiting deliveries and its attempts: nothing more is sent to it (an attempt already in flight may still arrive). ' +
        'A repeat answers 404. Admin keys only.',
      'x-stability': 'beta',
      params: EndpointIdParamsSchema,
      response: {
        204: { type: 'null', description: 'Deleted.' },
        400: errorResponse('`endpointId` is not a positive integer, or a query parameter was sent (`invalid_request`); or a body was sent that is not JSON (`malformed_json`).',
          undefined, { invalid_request: 'path parameter "endpointId" must be >= 1' }),
        404: errorResponse('No endpoint has this id (`webhook_endpoint_not_found`); a delete that was made answers so when repeated.', undefined,
          { webhook_endpoint_not_found: `No webhook endpoint has id ${ENDPOINT_EXAMPLE.id}.` }),
        413: errorResponse('A body was sent, larger than the limit (`payload_too_large`); this operation takes none.'),
        415: errorResponse('A body was sent that is not `application/json` in UTF-8 (`unsupported_media_type`); this operation takes none.'),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const id = endpointIdOf(request.params.endpointId)
    if (id === undefined || !await app.webhookStore.removeWebhookEndpoint(id)) throw endpointNotFound(request.params.endpointId)
    audit.record(request, 'deleted', id)
    return reply.code(204).send()
  })

  await app.register(updateEndpoint, { audit })
  await app.register(endpointActions, { audit })

  allowOnly(app, '/webhook-endpoints', ['GET', 'POST'])
  allowOnly(app, '/webhook-endpoints/:endpointId', ['GET', 'PATCH', 'DELETE'])
}

export default webhookEndpointsRoutes
