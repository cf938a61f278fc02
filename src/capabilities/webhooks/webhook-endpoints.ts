import type { WebhookSettings } from '../../infra/config/config.js'
import type { EventType } from '../events/index.js'
import type { IdempotencyCompletion } from '../idempotency/index.js'
import { WebhookAddressError } from './address-guard.js'
import { ENDPOINT_DESCRIPTION_MAX_LENGTH, ENDPOINT_NAME_MAX_LENGTH, ENDPOINT_RATE_LIMIT_MAX, SECRET_ROTATION_OVERLAP_MS, WEBHOOK_ENDPOINTS_MAX } from './endpoint-limits.js'
import { generateSigningKeys, SIGNING_SCHEMES, type SigningScheme } from './signature.js'
import { WebhookEndpointLimitError, type WebhookEndpointChange, type WebhookEndpointRecord, type WebhookEndpointStore } from './store/webhook-store.js'
import { checkWebhookUrl } from './webhook-url.js'

// The rules of registering and changing an endpoint, one set for both faces: `npx petstore webhooks …` and
// `/v1/webhook-endpoints` call these, and word their refusals their own way (a flag, a body field)

export { ENDPOINT_NAME_MAX_LENGTH, SECRET_ROTATION_OVERLAP_MS } from './endpoint-limits.js'

/** The part of a request to register or change an endpoint that a refusal names: a body field, or a flag of the CLI. */
export type EndpointField = 'url' | 'events' | 'name' | 'description' | 'rateLimit' | 'signing' | 'eventId' | 'since' | 'until'

/** Why a request to register or change an endpoint is refused, and which of its parts is wrong; the message says how, without naming the part. */
export class WebhookEndpointError extends Error {
  constructor (readonly field: EndpointField, message: string) {
    super(message)
    this.name = 'WebhookEndpointError'
  }
}

/** What is asked of a new endpoint, as either face takes it; what is left out gets its default. */
export interface EndpointInput {
  url: string
  /** All the known types when left out. */
  events?: readonly string[]
  /** The URL's host when left out. */
  name?: string
  description?: string
  rateLimit?: number
  /** `hmac-sha256` when left out. */
  signing?: string
  disabled?: boolean
}

/** An endpoint to add, checked: its URL, the events it asked for, its name and settings. */
export interface EndpointRequest {
  url: URL
  eventTypes: EventType[]
  name: string
  description: string | undefined
  rateLimit: number | undefined
  signing: SigningScheme
  disabled: boolean
  /** The settings beyond the defaults that let the URL through (`NAME=value`): the instances that deliver need them too. */
  allowedBy: string[]
}

/** A change of an endpoint, as either face takes it: what is left out stays; null removes a description or a rate limit. */
export interface EndpointPatch {
  url?: string
  events?: readonly string[]
  name?: string
  description?: string | null
  rateLimit?: number | null
  disabled?: boolean
}

/** An endpoint added: `secret`, what the receiver verifies with for `hmac-sha256`; `publicKey` for `ed25519` (its private key stays in the store). */
export interface Added { outcome: 'added', endpoint: WebhookEndpointRecord, secret: string | undefined, publicKey: string | undefined }

/** What adding an endpoint came to. */
export type AddedEndpoint =
  | Added
  | { outcome: 're-enabled', endpoint: WebhookEndpointRecord }
  | { outcome: 'already-registered', endpoint: WebhookEndpointRecord }
  /** {@link WEBHOOK_ENDPOINTS_MAX} endpoints are registered: nothing was added. */
  | { outcome: 'limit-reached', limit: number }

/** How an endpoint is added: `reenable`, see {@link addEndpoint}; `completing`, the `Idempotency-Key` claim completed with the answer of what was added. */
export interface AddOptions {
  reenable: boolean
  completing?: { claim: IdempotencyCompletion, answer: (added: Added) => string }
}

/** A rotation's new key, shown once: the secret for `hmac-sha256`, the public key for `ed25519`; and until when the old one signs too. */
export interface RotatedSecret {
  secret: string | undefined
  publicKey: string | undefined
  previousUntil: Date
}

/**
 * Checks a new endpoint before anything is stored: the URL (scheme, and unless private networks are allowed,
 * a host that is and resolves to public addresses only), the event types (all by default), the name (the URL's
 * host by default), the description, the rate limit and the signing scheme.
 */
export async function checkEndpointRequest (input: EndpointInput, settings: WebhookSettings, known: readonly EventType[]): Promise<EndpointRequest> {
  const { url, allowedBy } = await checkUrl(input.url, settings)
  return {
    url,
    allowedBy,
    eventTypes: input.events === undefined ? [...known] : checkEventTypes(input.events, known),
    name: checkEndpointName(input.name ?? url.host),
    description: input.description === undefined ? undefined : checkDescription(input.description),
    rateLimit: input.rateLimit === undefined ? undefined : checkRateLimit(input.rateLimit),
    signing: checkSigning(input.signing),
    disabled: input.disabled === true
  }
}

/** Checks a change before anything is stored (a new URL as at registration); `allowedBy` as for a new endpoint's URL. */
export async function checkEndpointChange (patch: EndpointPatch, settings: WebhookSettings, known: readonly EventType[]): Promise<{ change: WebhookEndpointChange, allowedBy: string[] }> {
  const checked = patch.url === undefined ? undefined : await checkUrl(patch.url, settings)
  const change: WebhookEndpointChange = {
    ...(checked === undefined ? {} : { url: checked.url.href }),
    ...(patch.events === undefined ? {} : { eventTypes: checkEventTypes(patch.events, known) }),
    ...(patch.name === undefined ? {} : { name: checkEndpointName(patch.name) }),
    ...(patch.description === undefined ? {} : { description: patch.description === null ? null : checkDescription(patch.description) }),
    ...(patch.rateLimit === undefined ? {} : { rateLimit: patch.rateLimit === null ? null : checkRateLimit(patch.rateLimit) }),
    ...(patch.disabled === undefined ? {} : { enabled: !patch.disabled })
  }
  return { change, allowedBy: checked?.allowedBy ?? [] }
}

async function checkUrl (text: string, settings: WebhookSettings): Promise<{ url: URL, allowedBy: string[] }> {
  return await checkWebhookUrl(text, settings).catch((error: unknown) => {
    throw error instanceof WebhookAddressError ? new WebhookEndpointError('url', error.message) : error
  })
}

/** Event type names checked against the `known` ones (the app's registry): at least one, each known; in the known order, each once. */
export function checkEventTypes (names: readonly string[], known: readonly EventType[]): EventType[] {
  const unknown = names.find((name) => !known.includes(name))
  if (names.length === 0 || unknown !== undefined) {
    throw new WebhookEndpointError('events', `must name at least one of ${known.join(', ')}${unknown === undefined ? '' : `; ${JSON.stringify(unknown)} is not an event type`}`)
  }
  return known.filter((type) => names.includes(type))
}

/** The event types of a comma-separated list of the `known` ones (all of them when it is left out), in their order: the CLI's `--events`. */
export function parseEventTypes (value: string | undefined, known: readonly EventType[]): EventType[] {
  if (value === undefined) return [...known]
  const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '')
  const unknown = names.find((name) => !known.includes(name))
  if (names.length === 0 || unknown !== undefined) {
    throw new WebhookEndpointError('events', `must be a comma-separated list of ${known.join(', ')}${unknown === undefined ? '' : `; "${unknown}" is not an event type`}`)
  }
  return known.filter((type) => names.includes(type))
}

function checkEndpointName (name: string): string {
  const trimmed = name.trim()
  if (trimmed === '' || [...trimmed].length > ENDPOINT_NAME_MAX_LENGTH) throw new WebhookEndpointError('name', `must have 1 to ${ENDPOINT_NAME_MAX_LENGTH} characters`)
  return trimmed
}

function checkDescription (description: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if ([...description].length > ENDPOINT_DESCRIPTION_MAX_LENGTH || /[\u0000-\u001f\u007f]/.test(description)) {
    throw new WebhookEndpointError('description', `must have at most ${ENDPOINT_DESCRIPTION_MAX_LENGTH} characters and no control characters`)
  }
  return description
}

function checkRateLimit (rateLimit: number): number {
  if (!Number.isInteger(rateLimit) || rateLimit < 1 || rateLimit > ENDPOINT_RATE_LIMIT_MAX) {
    throw new WebhookEndpointError('rateLimit', `must be a whole number of deliveries per second from 1 to ${ENDPOINT_RATE_LIMIT_MAX}`)
  }
  return rateLimit
}

function checkSigning (signing: string | undefined): SigningScheme {
  if (signing === undefined) return 'hmac-sha256'
  const scheme = SIGNING_SCHEMES.find((candidate) => candidate === signing)
  if (scheme === undefined) throw new WebhookEndpointError('signing', `must be ${SIGNING_SCHEMES.join(' or ')}`)
  return scheme
}

/**
 * Registers an endpoint with new keys, at most {@link WEBHOOK_ENDPOINTS_MAX} of them. A URL already registered
 * is not registered twice: with `reenable` (the CLI's `webhooks add`), the URL of a disabled endpoint enables
 * that one instead, keeping its keys.
 */
export async function addEndpoint (store: WebhookEndpointStore, request: EndpointRequest, now: Date, { reenable, completing }: AddOptions): Promise<AddedEndpoint> {
  const existing = (await store.listWebhookEndpoints()).find((endpoint) => endpoint.url === request.url.href)
  if (existing !== undefined && !(reenable && existing.disabledAt !== null)) return { outcome: 'already-registered', endpoint: existing }
  if (existing !== undefined) {
    const changed = await store.updateWebhookEndpoint(existing.id, { enabled: true }, now)
    return { outcome: 're-enabled', endpoint: changed.outcome === 'changed' ? changed.after : existing }
  }
  const { secret, publicKey } = generateSigningKeys(request.signing)
  // the receiver is given the secret of an HMAC endpoint, the public key of an ed25519 one
  const shown = (endpoint: WebhookEndpointRecord): Added => ({ outcome: 'added', endpoint, secret: publicKey === undefined ? secret : undefined, publicKey })
  try {
    const endpoint = await store.createWebhookEndpoint({
      name: request.name,
      url: request.url.href,
      eventTypes: request.eventTypes,
      secret,
      signing: request.signing,
      disabled: request.disabled,
      ...(request.description === undefined ? {} : { description: request.description }),
      ...(request.rateLimit === undefined ? {} : { rateLimit: request.rateLimit }),
      ...(publicKey === undefined ? {} : { publicKey })
    }, now, {
      maxEndpoints: WEBHOOK_ENDPOINTS_MAX,
      ...(completing === undefined ? {} : { completing: { claim: completing.claim, answer: (created) => completing.answer(shown(created)) } })
    })
    return shown(endpoint)
  } catch (error) {
    if (error instanceof WebhookEndpointLimitError) return { outcome: 'limit-reached', limit: error.limit }
    throw error
  }
}

/**
 * Gives an endpoint new keys of its scheme; the current ones keep signing beside them for {@link SECRET_ROTATION_OVERLAP_MS},
 * and so do the keys earlier rotations retired, each until its own overlap ends. Undefined when no endpoint has this id.
 */
export async function rotateEndpointSecret (store: WebhookEndpointStore, id: number, now: Date): Promise<RotatedSecret | undefined> {
  const endpoint = await store.findWebhookEndpoint(id)
  if (endpoint === undefined) return undefined
  const { secret, publicKey } = generateSigningKeys(endpoint.signing)
  const previousUntil = new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS)
  if (!await store.rotateWebhookSecret(id, secret, previousUntil, now, publicKey)) return undefined
  return { secret: publicKey === undefined ? secret : undefined, publicKey, previousUntil }
}
