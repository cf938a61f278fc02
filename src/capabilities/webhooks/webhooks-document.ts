import type { WebhookSettings } from '../../infra/config/config.js'
import { componentRefOf, type EventType, type EventTypeCatalogue } from '../events/index.js'
import { RESPONSE_BODY_LIMIT_BYTES, WEBHOOK_USER_AGENT } from './webhook-policy.js'

/** A type's webhook operation id: `pet.created` → `petCreatedWebhook`. */
export function webhookOperationIdOf (type: EventType): string {
  return `${type.split(/[._-]/).map((word, i) => i === 0 ? word : `${word.charAt(0).toUpperCase()}${word.slice(1)}`).join('')}Webhook`
}

/** The request headers of every webhook (Standard Webhooks), as OpenAPI header parameters. */
export function headerParameters (): Array<{ name: string, in: 'header', required: true, description: string, schema: Record<string, unknown>, example: string }> {
  return [
    {
      name: 'webhook-id',
      in: 'header',
      required: true,
      description: 'The event\'s `id`: the same on every retry of this event, so a receiver deduplicates by it.',
      schema: { type: 'string', pattern: '^[1-9][0-9]{0,15}$', maxLength: 16 },
      example: '42'
    },
    {
      name: 'webhook-timestamp',
      in: 'header',
      required: true,
      description: 'When this attempt was sent, in seconds since the epoch; signed, so a receiver can refuse old replays (the Standard Webhooks libraries allow 5 minutes).',
      schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 },
      example: '1795000000'
    },
    {
      name: 'webhook-signature',
      in: 'header',
      required: true,
      description: '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint\'s secret (the base64 after `whsec_`); ' +
        'during a secret rotation two, space-separated: the new secret\'s and the old one\'s. Verify it with any Standard Webhooks library before trusting the body.',
      schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]{44}( v1,[A-Za-z0-9+/=]{44})?$', maxLength: 200 },
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='
    },
    {
      name: 'User-Agent',
      in: 'header',
      required: true,
      description: 'The sender.',
      schema: { type: 'string', enum: [WEBHOOK_USER_AGENT], maxLength: 100 },
      example: WEBHOOK_USER_AGENT
    }
  ]
}

export function describeDelivery (settings: WebhookSettings): string {
  const schedule = settings.retryScheduleMs.map((ms) => ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`)
  return 'Sent to every endpoint the operator registered for this type (`npx petstore webhooks add`), for each event recorded after it was added, ' +
    'as the feed\'s Event in the body, signed as Standard Webhooks specifies. Any 2xx answer within ' +
    `${settings.timeoutMs / 1000} s is a delivery; anything else (another status, a timeout, a refused or reset connection, a TLS error) is retried ` +
    `after ${schedule.join(', ')} (each ±20 % jitter, never sooner than a \`Retry-After\` the receiver sent, honoured up to 1 h), then given up; ` +
    `a 429, 502, 503 or 504 makes the whole endpoint wait as long, and a 410 Gone disables the endpoint. Redirects are not followed; at most ${RESPONSE_BODY_LIMIT_BYTES / 1024} KiB of an answer is read. ` +
    'Delivered at least once: a retry after a crash may repeat an event already delivered, so deduplicate by `webhook-id`. ' +
    `Up to ${settings.endpointConcurrency} deliveries to one endpoint are in flight at once, and after a failure later events go on while the failed one waits for its retry, ` +
    'so order by the event `id`, not by arrival.'
}

/**
 * The document's top-level `webhooks` (OpenAPI 3.1): what receivers get, one entry per event type,
 * with its headers and payload, marked beta like the feed.
 */
export function webhooksDocument (settings: WebhookSettings, catalogue: EventTypeCatalogue): Record<string, unknown> {
  return Object.fromEntries(catalogue.definitions.map(({ type, schema, example }) => [type, {
    post: {
      operationId: webhookOperationIdOf(type),
      tags: ['events'],
      summary: `A \`${type}\` event, pushed to a registered endpoint (beta)`,
      description: describeDelivery(settings),
      'x-stability': 'beta',
      // receivers authenticate the sender by the signature, not by a key of this API
      security: [],
      parameters: headerParameters(),
      requestBody: {
        required: true,
        description: 'The event, exactly as `listEvents` returns it.',
        content: { 'application/json': { schema: { $ref: componentRefOf(schema) }, example } }
      },
      responses: {
        '2XX': { description: 'Delivered: any 2xx status; the body is ignored.' },
        default: { description: 'Not delivered: retried on the schedule, then given up.' }
      }
    }
  }]))
}
