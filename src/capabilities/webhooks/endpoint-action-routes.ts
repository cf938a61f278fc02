import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { nextLinkHeader, pagedListBadRequest, PAGE_LIMIT_DEFAULT } from '../../infra/http/paged-list.js'
import type { HeaderSpec } from '../../infra/schemas/responses.js'
import { commonErrorResponses, errorResponse } from '../../infra/schemas/responses.js'
import { ADMIN_ONLY } from '../keys/index.js'
import { WebhookRecoverySchema, WebhookResendSchema } from './endpoint-action-schemas.js'
import { sendTestMessage } from './endpoint-test.js'
import { checkedAsRequest, endpointDisabled, endpointIdOf, endpointNotFound } from './endpoint-view.js'
import { checkRecoveryWindow } from './redelivery-window.js'
import type { WebhookAttemptRecord } from './store/webhook-delivery-log.js'
import type { WebhookAudit } from './webhook-audit.js'
import { ENDPOINT_EXAMPLE, EndpointIdParamsSchema } from './webhook-endpoint-schemas.js'
import { rotateEndpointSecret } from './webhook-endpoints.js'
import { ListWebhookAttemptsQuerySchema } from './webhook-lists.js'

// a POST that takes no body still reads one that is sent: refused as every body is, when it is not JSON or too large
const BODY_REFUSALS = {
  413: errorResponse('A body was sent, larger than the limit (`payload_too_large`); this operation takes none.'),
  415: errorResponse('A body was sent that is not `application/json` in UTF-8 (`unsupported_media_type`); this operation takes none.')
}
const NOT_FOUND = errorResponse('No endpoint has this id (`webhook_endpoint_not_found`).', undefined, { webhook_endpoint_not_found: `No webhook endpoint has id ${ENDPOINT_EXAMPLE.id}.` })
const BAD_ID = errorResponse('`endpointId` is not a positive integer, or a query parameter was sent (`invalid_request`); or a body was sent that is not JSON (`malformed_json`).',
  undefined, { invalid_request: 'path parameter "endpointId" must be >= 1' })
const DISABLED = (what: string) => errorResponse(`The endpoint is disabled (\`webhook_endpoint_disabled\`): enable it first. Nothing was ${what}.`, undefined,
  { webhook_endpoint_disabled: `Webhook endpoint ${ENDPOINT_EXAMPLE.id} is disabled, so nothing is sent to it: enable it first (PATCH {"disabled": false}), then ${what === 'queued' ? 'resend' : 'recover'}.` })

// the list's `Link`, on the path of whichever endpoint it lists
const ATTEMPTS_LINK_HEADER: HeaderSpec = {
  ...nextLinkHeader(`/webhook-endpoints/${ENDPOINT_EXAMPLE.id}/attempts`, 'attempts'),
  pattern: '^<[^>]+/webhook-endpoints/[1-9][0-9]{0,15}/attempts\\?[^>]+>; rel="next"$'
}

/** An attempt as the API answers it: what is unset is absent. */
function attemptView (attempt: WebhookAttemptRecord) {
  return {
    eventId: attempt.eventId,
    ...(attempt.eventType === null ? {} : { eventType: attempt.eventType }),
    attempt: attempt.attempt,
    attemptedAt: attempt.attemptedAt,
    result: attempt.result,
    ...(attempt.status === null ? {} : { status: attempt.status }),
    ...(attempt.error === null ? {} : { error: attempt.error }),
    durationMs: attempt.durationMs,
    ...(attempt.nextAttemptAt === null ? {} : { nextAttemptAt: attempt.nextAttemptAt })
  }
}

/** What is done with an endpoint's deliveries (beta, admin keys only): rotate its secret, test it, read its attempts, resend one event, recover a window. */
const endpointActions: FastifyPluginAsyncTypebox<{ audit: WebhookAudit }> = async (app, { audit }) => {
  const attemptsList = app.webhookAttemptList
  const now = (): Date => new Date(app.clock.now())
  const common = { config: { ...ADMIN_ONLY } }
  const withId = { params: EndpointIdParamsSchema, tags: ['webhooks'], 'x-stability': 'beta' as const }

  app.post('/webhook-endpoints/:endpointId/rotate-secret', {
    ...common,
    schema: {
      ...withId,
      operationId: 'rotateWebhookEndpointSecret',
      summary: 'Rotate a webhook endpoint\'s signing secret (beta)',
      description: 'Gives the endpoint a new secret (an `ed25519` endpoint, a new key pair) and answers it once (its public key). For 24 hours requests carry signatures ' +
        'under the old and the new, so the receiver can switch without losing a delivery. Admin keys only.',
      response: { 200: { ...Type.Ref('RotatedWebhookSecret'), description: 'The new secret (or public key).' }, 400: BAD_ID, 404: NOT_FOUND, ...BODY_REFUSALS, ...commonErrorResponses() }
    }
  }, async (request) => {
    const id = endpointIdOf(request.params.endpointId)
    const rotated = id === undefined ? undefined : await rotateEndpointSecret(app.webhookStore, id, now())
    if (id === undefined || rotated === undefined) throw endpointNotFound(request.params.endpointId)
    audit.record(request, 'secret_rotated', id, { previousSecretValidUntil: rotated.previousUntil.toISOString() })
    return { ...(rotated.secret === undefined ? {} : { secret: rotated.secret }), ...(rotated.publicKey === undefined ? {} : { publicKey: rotated.publicKey }), previousSecretValidUntil: rotated.previousUntil.toISOString() }
  })

  app.post('/webhook-endpoints/:endpointId/test', {
    ...common,
    schema: {
      ...withId,
      operationId: 'testWebhookEndpoint',
      summary: 'Send a webhook endpoint a test message (beta)',
      description: 'Sends the endpoint one signed `webhook.test` message now, as deliveries are sent (same signing, address rules and timeout; also to a disabled endpoint), ' +
        'and answers what came of it: 200 whether or not it was delivered (`delivered`, the status or the error). It is not an event: not in the feed, not retried, ' +
        'not among the attempts. Admin keys only.',
      response: { 200: { ...Type.Ref('WebhookTestResult'), description: 'What the test came to.' }, 400: BAD_ID, 404: NOT_FOUND, ...BODY_REFUSALS, ...commonErrorResponses() }
    }
  }, async (request) => {
    const id = endpointIdOf(request.params.endpointId)
    const sent = id === undefined ? undefined : await sendTestMessage(app.webhookDeliveryLog, id, app.config.webhooks, now())
    if (sent === undefined) throw endpointNotFound(request.params.endpointId)
    const { id: endpointId, status, error, ...rest } = sent
    return { endpointId, ...rest, ...(status === null ? {} : { status }), ...(error === null ? {} : { error }) }
  })

  app.get('/webhook-endpoints/:endpointId/attempts', {
    ...common,
    schema: {
      ...withId,
      operationId: 'listWebhookAttempts',
      summary: 'List a webhook endpoint\'s delivery attempts (beta)',
      description: 'Returns at most `limit` of the endpoint\'s attempts, newest first, optionally only those that failed or only those delivered: each with its event\'s id and type, ' +
        'its number, when it was sent, the status or the error, how long it took, and the next attempt. When more exist, a `Link: <…>; rel="next"` header points at ' +
        'the next page. Attempts are kept as long as their events. Admin keys only.',
      querystring: ListWebhookAttemptsQuerySchema,
      response: {
        200: { ...Type.Ref('WebhookAttempts'), description: 'A page of attempts (a bare array).', headers: { Link: ATTEMPTS_LINK_HEADER } },
        400: pagedListBadRequest(['status']),
        404: NOT_FOUND,
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { limit = PAGE_LIMIT_DEFAULT, status, cursor } = request.query
    const id = endpointIdOf(request.params.endpointId)
    if (id === undefined) throw endpointNotFound(request.params.endpointId)
    const filters = { endpoint: String(id), ...(status === undefined ? {} : { status }) }
    const before = attemptsList.after(cursor, filters)
    const attempts = await app.webhookDeliveryLog.listWebhookAttempts(id, {
      limit: limit + 1,
      ...(before === undefined ? {} : { beforeId: before }),
      ...(status === undefined ? {} : { result: status })
    })
    if (attempts === undefined) throw endpointNotFound(id)
    const page = attempts.slice(0, limit)
    const last = page.at(-1)
    if (attempts.length > limit && last !== undefined) {
      const next = new URLSearchParams({ limit: String(limit), ...(status === undefined ? {} : { status }), cursor: attemptsList.cursor(last.id, filters) })
      reply.header('link', `<${baseUrlFor(app.config, request.host)}/webhook-endpoints/${id}/attempts?${next.toString()}>; rel="next"`)
    }
    return page.map(attemptView)
  })

  app.post('/webhook-endpoints/:endpointId/resend', {
    ...common,
    schema: {
      ...withId,
      operationId: 'resendWebhookEvent',
      summary: 'Send a webhook endpoint an event again (beta)',
      description: 'Puts the event in line for the endpoint again, due now, before its later events, with the whole retry schedule: whether it was delivered, ' +
        'waiting or given up. Answers 202 once it is queued; it is sent in the background (see `listWebhookAttempts`). Admin keys only.',
      body: Type.Ref(WebhookResendSchema),
      response: {
        202: { ...Type.Ref('WebhookResent'), description: 'Queued.' },
        400: errorResponse('`endpointId` is not a positive integer, the body has no `eventId` or an unknown field, or the event is of a type the endpoint does not receive ' +
          '(`invalid_request`; the message names `eventId`); or the body is not JSON (`malformed_json`).', undefined,
        { invalid_request: 'body: field "eventId": event 42 is an order.created, which webhook endpoint 3 does not receive (pet.created)' }),
        404: NOT_FOUND,
        409: DISABLED('queued'),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8 (`unsupported_media_type`).'),
        422: errorResponse('No event has `eventId` (`event_not_found`): none was recorded, or retention deleted it.', undefined,
          { event_not_found: 'body: field "eventId": no event has id 42 (never recorded, or deleted by retention)' }, 422),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const id = endpointIdOf(request.params.endpointId)
    if (id === undefined) throw endpointNotFound(request.params.endpointId)
    const { eventId } = request.body
    const notFound = new ApiError('event_not_found', `body: field "eventId": no event has id ${eventId} (never recorded, or deleted by retention)`, {}, 422)
    if (typeof eventId !== 'number') throw notFound
    const resent = await app.webhookDeliveryLog.resendWebhookEvent(id, eventId)
    switch (resent.outcome) {
      case 'endpoint_not_found': throw endpointNotFound(id)
      case 'endpoint_disabled': throw endpointDisabled(id, 'resend')
      case 'event_not_found': throw notFound
      case 'type_not_received':
        throw new ApiError('invalid_request', `body: field "eventId": event ${eventId} is a ${resent.type}, which webhook endpoint ${id} does not receive (${resent.received.join(', ')})`)
      case 'waiting':
      case 'queued':
        audit.record(request, 'resent', id, { eventId })
        return reply.code(202).send({ endpointId: id, eventId, ...(resent.outcome === 'queued' ? { attempt: resent.attempt } : {}) })
    }
  })

  app.post('/webhook-endpoints/:endpointId/recover', {
    ...common,
    schema: {
      ...withId,
      operationId: 'recoverWebhookDeliveries',
      summary: 'Send a webhook endpoint what it failed in a window (beta)',
      description: 'Puts back in line every event the endpoint failed or gave up on from `since` to before `until` (now by default) and not delivered since, due now with ' +
        'the whole retry schedule, in one transaction, and answers 202 with what it queued; they are sent in the background in event-id order, each once (a repeat ' +
        `finds those delivered meanwhile gone and queues the rest again, never twice). The window lies within the events' retention (${app.config.eventRetentionDays} days here). Admin keys only.`,
      body: Type.Ref(WebhookRecoverySchema),
      response: {
        202: { ...Type.Ref('WebhookRecovered'), description: 'Queued.' },
        400: errorResponse('`endpointId` is not a positive integer, or `since` or `until` is not a date-time, `since` is in the future or older than the retention, ' +
          '`until` is not after `since`, or an unknown field was sent (`invalid_request`; the message names the field); or the body is not JSON (`malformed_json`).', undefined,
        { invalid_request: 'body: field "since" must be within the last 30 days (from 2026-10-26T09:41:02.117Z): the events of older attempts are no longer retained' }),
        404: NOT_FOUND,
        409: DISABLED('recovered'),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8 (`unsupported_media_type`).'),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const id = endpointIdOf(request.params.endpointId)
    if (id === undefined) throw endpointNotFound(request.params.endpointId)
    const window = await checkedAsRequest(() => checkRecoveryWindow(request.body.since, request.body.until, now(), app.config.eventRetentionDays))
    const recovered = await app.webhookDeliveryLog.recoverWebhookDeliveries(id, window.since, window.until)
    if (recovered.outcome === 'endpoint_not_found') throw endpointNotFound(id)
    if (recovered.outcome === 'endpoint_disabled') throw endpointDisabled(id, 'recover')
    const { queued, firstEventId, lastEventId } = recovered
    const answer = {
      endpointId: id,
      since: window.since.toISOString(),
      until: window.until.toISOString(),
      queued,
      ...(firstEventId === null ? {} : { firstEventId }),
      ...(lastEventId === null ? {} : { lastEventId })
    }
    audit.record(request, 'recovered', id, { since: answer.since, until: answer.until, queued })
    return reply.code(202).send(answer)
  })

  allowOnly(app, '/webhook-endpoints/:endpointId/rotate-secret', ['POST'])
  allowOnly(app, '/webhook-endpoints/:endpointId/test', ['POST'])
  allowOnly(app, '/webhook-endpoints/:endpointId/attempts', ['GET'])
  allowOnly(app, '/webhook-endpoints/:endpointId/resend', ['POST'])
  allowOnly(app, '/webhook-endpoints/:endpointId/recover', ['POST'])
}

export default endpointActions
