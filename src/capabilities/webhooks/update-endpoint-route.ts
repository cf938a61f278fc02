import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { acceptMergePatchBodies } from '../../infra/http/content-types.js'
import { answerConditionalChange, MERGE_PATCH_CONSUMES, mergePatchResponses } from '../../infra/http/merge-patch-route.js'
import { ifMatchHeaderSchema } from '../../infra/http/tagged-answers.js'
import { errorResponse } from '../../infra/schemas/responses.js'
import { ADMIN_ONLY } from '../keys/index.js'
import { ENDPOINT_TAGGING } from './endpoint-tags.js'
import { checkedAsRequest, endpointIdOf, endpointNotFound, endpointView } from './endpoint-view.js'
import type { WebhookAudit } from './webhook-audit.js'
import { ENDPOINT_EXAMPLE, EndpointIdParamsSchema, webhookEndpointSchemas, type WebhookEndpointView } from './webhook-endpoint-schemas.js'
import { checkEndpointChange } from './webhook-endpoints.js'

function preconditionFailedMessage (id: number | bigint): string {
  return `If-Match does not match the current ETag of webhook endpoint ${id}: its settings changed since that tag was read. Read it again and retry.`
}

/**
 * `PATCH /webhook-endpoints/{endpointId}` (updateWebhookEndpoint, beta, admin keys only): a JSON Merge Patch of an
 * endpoint with `If-Match`, checked by the rules `webhooks update` follows. In a context of its own, because it
 * alone also takes `application/merge-patch+json`.
 */
const updateEndpoint: FastifyPluginAsyncTypebox<{ audit: WebhookAudit }> = async (app, { audit }) => {
  acceptMergePatchBodies(app)
  const known = app.eventTypes.types
  const { WebhookEndpointPatch } = webhookEndpointSchemas(known)

  app.patch('/webhook-endpoints/:endpointId', {
    config: { ...ADMIN_ONLY },
    schema: {
      operationId: 'updateWebhookEndpoint',
      tags: ['webhooks'],
      summary: 'Change a webhook endpoint (beta)',
      description: 'Changes the fields the body names — a JSON Merge Patch (RFC 7396) sent as `application/merge-patch+json` or `application/json` — keeping the ' +
        'endpoint\'s secret and its queue, and answers the endpoint as it now is, with its `ETag`. A new `url` is checked as at registration. ' +
        '`disabled: true` stops every delivery; `disabled: false` sends what waited, then the events recorded meanwhile, in event-id order. ' +
        'Deliveries of an event type no longer wanted are dropped; a type newly wanted applies to the events recorded from now on. ' +
        'With `If-Match`, the change is made only if the endpoint\'s settings still have that tag (its health, which every delivery changes, is not compared); else 412. Admin keys only.',
      'x-stability': 'beta',
      consumes: MERGE_PATCH_CONSUMES,
      params: EndpointIdParamsSchema,
      headers: Type.Object({
        'if-match': Type.Optional(ifMatchHeaderSchema('Makes the change conditional: the `ETag` of the endpoint as the client last saw it (from `getWebhookEndpoint` or a change), ' +
          'a list of tags, or `*`. When none has the settings\' part of the current tag (strong comparison), the answer is 412 `precondition_failed` and nothing changes.'))
      }),
      body: Type.Ref(WebhookEndpointPatch),
      response: mergePatchResponses({
        resource: Type.Ref('WebhookEndpoint'),
        changed: 'The endpoint as it now is.',
        badRequest: errorResponse('`endpointId` is not a positive integer, the body is not a valid patch (an unknown event type, no event type, a `rateLimit` out of range, ' +
          'a URL refused by the address rules: the message names the field; `null` where a value is needed, or an unknown field), or `If-Match` is malformed (`invalid_request`); ' +
          'or the body is not JSON (`malformed_json`).', undefined, { invalid_request: 'body: field "events" must NOT have fewer than 1 items' }),
        notFound: errorResponse('No endpoint has this id (`webhook_endpoint_not_found`).', undefined, { webhook_endpoint_not_found: `No webhook endpoint has id ${ENDPOINT_EXAMPLE.id}.` }),
        conflict: errorResponse('The new `url` is another endpoint\'s already (`webhook_endpoint_exists`). Nothing changed.', undefined,
          { webhook_endpoint_exists: `${ENDPOINT_EXAMPLE.url} is registered already as webhook endpoint ${ENDPOINT_EXAMPLE.id + 1}.` }),
        preconditionFailed: errorResponse('`If-Match` does not match the settings of the endpoint\'s current `ETag` (`precondition_failed`): they changed since. Nothing changed.',
          undefined, { precondition_failed: preconditionFailedMessage(ENDPOINT_EXAMPLE.id) })
      })
    }
  }, async (request, reply) => {
    const { endpointId } = request.params
    const id = endpointIdOf(endpointId)
    if (id === undefined) throw endpointNotFound(endpointId)
    const { change } = await checkedAsRequest(async () => await checkEndpointChange(request.body, app.config.webhooks, known))
    if (change.url !== undefined) {
      const taken = (await app.webhookStore.listWebhookEndpoints()).find((endpoint) => endpoint.url === change.url && endpoint.id !== id)
      if (taken !== undefined) throw new ApiError('webhook_endpoint_exists', `${taken.url} is registered already as webhook endpoint ${taken.id}.`)
    }
    return await answerConditionalChange(reply, {
      ifMatch: request.headers['if-match'],
      schemaName: 'WebhookEndpoint',
      tagging: ENDPOINT_TAGGING,
      change: async (precondition) => await app.webhookStore.updateWebhookEndpoint(id, change, new Date(app.clock.now()),
        precondition === undefined ? undefined : (current) => precondition(endpointView(current))),
      changed: (updated): WebhookEndpointView => {
        switch (updated.outcome) {
          case 'not_found': throw endpointNotFound(endpointId)
          case 'precondition_failed': throw new ApiError('precondition_failed', preconditionFailedMessage(id))
        }
        const fields = Object.keys(request.body)
        if (fields.length > 0) audit.record(request, 'updated', id, { fields, ...request.body })
        return endpointView(updated.after)
      }
    })
  })
}

export default updateEndpoint
