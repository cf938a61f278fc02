import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { PAGE_LIMIT_MAX } from '../../infra/http/paged-list.js'
import { int64Schema } from '../../infra/schemas/int64-schema.js'
import { STABILITY_KEYWORD } from '../../infra/schemas/keywords.js'
import type { EventType } from '../events/index.js'
import { ENDPOINT_DESCRIPTION_MAX_LENGTH, ENDPOINT_NAME_MAX_LENGTH, ENDPOINT_RATE_LIMIT_MAX, SECRET_ROTATION_OVERLAP_MS } from './endpoint-limits.js'
import { SIGNING_SCHEMES } from './signature.js'
import { WEBHOOK_URL_MAX_LENGTH } from './webhook-url.js'

// The API's view of webhook endpoints (`/v1/webhook-endpoints`, beta): what is asked, what is answered. The event
// types are the registry's (`app.eventTypes`), so the schemas are made once the producers have registered theirs

/** The endpoint the document's examples show. */
export const ENDPOINT_EXAMPLE = {
  id: 3,
  url: 'https://hooks.example.org/petstore',
  events: ['pet.created', 'order.created'],
  name: 'hooks.example.org',
  description: 'Keeps the storefront in step',
  disabled: false,
  rateLimit: 20,
  signing: 'hmac-sha256',
  createdAt: '2026-11-25T09:30:00.000Z',
  health: { waiting: 0, failed: 0, lastSuccessAt: '2026-11-25T09:41:02.117Z' }
} as const
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwQ6qbwG8SWbk='
const PUBLIC_KEY_EXAMPLE = 'whpk_9d8Wq6bUa5s3tOzS3ZJd2Ha2dG0Q4u4h8xQ7bQeM6g0='
const TIME_EXAMPLE = '2026-11-25T09:41:02.117Z'

/** A time as the service writes it: RFC 3339 in UTC with milliseconds. */
function timeSchema (description: string, example: string = TIME_EXAMPLE) {
  return Type.String({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
    maxLength: 24,
    description: `${description}, as RFC 3339 in UTC with milliseconds.`,
    examples: [example]
  })
}

/** An id the service assigns, counting up from 1 (below 2^53: a number here, a positive int64 in the document). */
const assignedId = (description: string, example: number) => Type.Unsafe<number>(int64Schema({ minimum: 1n, description, examples: [example] }))

const urlSchema = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX_LENGTH,
  description: 'Where the events are POSTed: an absolute `https:` URL without credentials or fragment, whose host is and resolves to public addresses only ' +
    '(no loopback, private, link-local, cloud-metadata or other special-purpose address, unless the deployment allows that network); ' +
    'checked when it is given and again at each delivery.',
  examples: [ENDPOINT_EXAMPLE.url]
})
const nameSchema = Type.String({
  minLength: 1,
  maxLength: ENDPOINT_NAME_MAX_LENGTH,
  description: `What the endpoint is called in lists: 1 to ${ENDPOINT_NAME_MAX_LENGTH} characters, trimmed (the URL's host by default).`,
  examples: [ENDPOINT_EXAMPLE.name]
})
const descriptionSchema = Type.String({
  maxLength: ENDPOINT_DESCRIPTION_MAX_LENGTH,
  description: `Free text for whoever manages the endpoint: at most ${ENDPOINT_DESCRIPTION_MAX_LENGTH} characters, no control characters.`,
  examples: [ENDPOINT_EXAMPLE.description]
})
const rateLimitSchema = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: ENDPOINT_RATE_LIMIT_MAX,
  description: `The most deliveries a second the endpoint is sent (1 to ${ENDPOINT_RATE_LIMIT_MAX}), on every instance together: a burst waits its turn, ` +
    'in event-id order, and nothing is failed for it; other endpoints are not slowed. None: as fast as the receiver answers.',
  examples: [ENDPOINT_EXAMPLE.rateLimit]
})
const signingSchema = Type.Unsafe<typeof SIGNING_SCHEMES[number]>({
  type: 'string',
  enum: [...SIGNING_SCHEMES],
  description: 'How requests are signed (Standard Webhooks, over `webhook-id.webhook-timestamp.body`): `hmac-sha256` under a shared secret (`whsec_…`), ' +
    'signatures `v1,…`; or `ed25519`, signatures `v1a,…`, which the receiver verifies with the endpoint\'s public key (`whpk_…`): the private key never leaves the service.',
  examples: ['hmac-sha256']
})
const publicKeySchema = Type.String({
  pattern: '^whpk_[A-Za-z0-9+/]{43}=$',
  maxLength: 49,
  description: 'The ed25519 public key requests are verified with (`ed25519` endpoints only): `whpk_` and the base64 of its 32 bytes (RFC 8032).',
  examples: [PUBLIC_KEY_EXAMPLE]
})
const secretSchema = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  maxLength: 50,
  description: 'The signing secret of an `hmac-sha256` endpoint: `whsec_` and the base64 of 32 random bytes. Shown only in this answer (and its replays); keep it like a password.',
  examples: [SECRET_EXAMPLE]
})
const count = (description: string) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [0] })

const HealthSchema = Type.Object({
  waiting: count('Deliveries not yet made nor given up: queued, and the events of its types recorded since its last schedule (a disabled endpoint\'s are what enabling it sends).'),
  failed: count('Deliveries given up after the whole retry schedule (see `recover`).'),
  lastSuccessAt: Type.Optional(timeSchema('When a delivery last succeeded; absent until one has')),
  lastFailureAt: Type.Optional(timeSchema('When an attempt last failed; absent until one has', '2026-11-25T09:40:57.003Z')),
  lastFailure: Type.Optional(Type.String({ maxLength: 500, description: 'How the last failed attempt failed: `answered 503`, `timed out`, `ECONNREFUSED`, `refused: …`.', examples: ['answered 503'] }))
}, { additionalProperties: false, description: 'How deliveries to the endpoint are going, read with it (never cached).' })

/** The endpoint's properties as answered: never its secret. */
function endpointProperties (events: TSchema) {
  return {
    id: assignedId('Unique identifier, assigned by the service.', ENDPOINT_EXAMPLE.id),
    url: urlSchema,
    events,
    name: nameSchema,
    description: Type.Optional(descriptionSchema),
    disabled: Type.Boolean({ description: 'Nothing is sent to a disabled endpoint; enabled again, it gets what it missed, in event-id order.', examples: [false] }),
    disabledAt: Type.Optional(timeSchema('Since when it is disabled (by a change, after failing for 3 days, or by a 410 Gone answer); absent while enabled', '2026-11-27T18:00:00.000Z')),
    rateLimit: Type.Optional(rateLimitSchema),
    signing: signingSchema,
    publicKey: Type.Optional(publicKeySchema),
    createdAt: timeSchema('When it was registered', ENDPOINT_EXAMPLE.createdAt),
    health: HealthSchema
  }
}

/** The webhook endpoints' schemas for the event types `known` (the registry's, in its order), the document's components in their order. */
export function webhookEndpointSchemas (known: readonly EventType[]) {
  const eventTypes = (description: string) => Type.Array(Type.Unsafe<EventType>({ type: 'string', enum: [...known] }), {
    minItems: 1,
    maxItems: known.length,
    uniqueItems: true,
    description,
    examples: [ENDPOINT_EXAMPLE.events]
  })
  const events = eventTypes('The event types sent to it, in the registry\'s order.')
  const WebhookEndpoint = Type.Object(endpointProperties(events), {
    $id: 'WebhookEndpoint',
    additionalProperties: false,
    examples: [ENDPOINT_EXAMPLE],
    description: 'An endpoint the events are delivered to (beta), with its health. Its signing secret is never shown again after its creation (or a rotation).'
  })
  const CreatedWebhookEndpoint = Type.Object({ ...endpointProperties(events), secret: Type.Optional(secretSchema) }, {
    $id: 'CreatedWebhookEndpoint',
    additionalProperties: false,
    examples: [{ ...ENDPOINT_EXAMPLE, health: { waiting: 0, failed: 0 }, secret: SECRET_EXAMPLE }],
    description: 'The endpoint registered, with what its receiver verifies requests with: `secret` for `hmac-sha256` (only in this answer), `publicKey` for `ed25519`.'
  })
  const WebhookEndpoints = Type.Array(Type.Ref(WebhookEndpoint), {
    $id: 'WebhookEndpoints',
    maxItems: PAGE_LIMIT_MAX,
    examples: [[ENDPOINT_EXAMPLE]],
    description: `Webhook endpoints in \`id\` order, at most ${PAGE_LIMIT_MAX} (one page).`
  })
  const NewWebhookEndpoint = Type.Object({
    url: urlSchema,
    events: eventTypes(`The event types to send it: at least one of ${known.map((type) => `\`${type}\``).join(', ')}, each once.`),
    name: Type.Optional(nameSchema),
    description: Type.Optional(descriptionSchema),
    disabled: Type.Optional(Type.Boolean({ description: 'Registered disabled: nothing is sent until it is enabled, then what was recorded since it was registered. Default false.' })),
    rateLimit: Type.Optional(rateLimitSchema),
    signing: Type.Optional({ ...signingSchema, description: `${signingSchema.description ?? ''} Default \`hmac-sha256\`.` })
  }, {
    $id: 'NewWebhookEndpoint',
    additionalProperties: false,
    examples: [{ url: ENDPOINT_EXAMPLE.url, events: ENDPOINT_EXAMPLE.events, description: ENDPOINT_EXAMPLE.description, rateLimit: ENDPOINT_EXAMPLE.rateLimit }],
    description: 'An endpoint to register: only events recorded from now on are sent to it. Any field not listed is rejected with 400.'
  })
  const WebhookEndpointPatch = Type.Object({
    url: Type.Optional(urlSchema),
    events: Type.Optional(eventTypes('The event types sent from now on: deliveries waiting (or given up) of a type no longer wanted are dropped; a type newly wanted applies to the events recorded from now on.')),
    name: Type.Optional(nameSchema),
    description: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: ENDPOINT_DESCRIPTION_MAX_LENGTH, description: `${descriptionSchema.description ?? ''} \`null\` removes it.` })),
    disabled: Type.Optional(Type.Boolean({ description: '`true` stops every delivery (the queue waits); `false` sends what waited, then what was recorded meanwhile, in event-id order.' })),
    rateLimit: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], format: 'int32', minimum: 1, maximum: ENDPOINT_RATE_LIMIT_MAX, description: `${rateLimitSchema.description ?? ''} \`null\` removes the limit.` }))
  }, {
    $id: 'WebhookEndpointPatch',
    additionalProperties: false,
    examples: [{ disabled: true }, { events: ['pet.created'], rateLimit: null }],
    description: 'A JSON Merge Patch (RFC 7396) of an endpoint: fields left out keep their value, `{}` changes nothing; its secret and its queue are kept. ' +
      '`signing` cannot change (register another endpoint); `null` removes `description` or `rateLimit` and is refused elsewhere.'
  })
  return { WebhookEndpoint, CreatedWebhookEndpoint, WebhookEndpoints, NewWebhookEndpoint, WebhookEndpointPatch }
}

/** A webhook endpoint as answered (the WebhookEndpoint schema). */
export interface WebhookEndpointView {
  id: number
  url: string
  events: EventType[]
  name: string
  description?: string
  disabled: boolean
  disabledAt?: string
  rateLimit?: number
  signing: typeof SIGNING_SCHEMES[number]
  publicKey?: string
  createdAt: string
  health: { waiting: number, failed: number, lastSuccessAt?: string, lastFailureAt?: string, lastFailure?: string }
}

/** An endpoint created, with its secret (hmac-sha256) shown once. */
export type CreatedWebhookEndpointView = WebhookEndpointView & { secret?: string }

/** What a rotation answers: the new secret (or public key) once, and until when the old one still signs. */
export const RotatedSecretSchema = Type.Object({
  secret: Type.Optional(secretSchema),
  publicKey: Type.Optional(publicKeySchema),
  previousSecretValidUntil: timeSchema(`Until when requests also carry a signature under the previous secret (or key): ${SECRET_ROTATION_OVERLAP_MS / 3_600_000} hours`, '2026-11-26T09:41:02.117Z')
}, {
  $id: 'RotatedWebhookSecret',
  additionalProperties: false,
  examples: [{ secret: SECRET_EXAMPLE, previousSecretValidUntil: '2026-11-26T09:41:02.117Z' }],
  description: 'The endpoint\'s new signing secret (`hmac-sha256`; only in this answer) or public key (`ed25519`).',
  [STABILITY_KEYWORD]: 'beta'
})
export type RotatedSecret = Static<typeof RotatedSecretSchema>

/** The endpoint id of a path. */
export const EndpointIdParamsSchema = Type.Object({
  endpointId: int64Schema({ minimum: 1n, description: 'The endpoint\'s id: a positive int64 in plain decimal digits. An id no endpoint has is 404.', examples: [ENDPOINT_EXAMPLE.id] })
})
