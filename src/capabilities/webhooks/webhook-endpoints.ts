import type { WebhookSettings } from '../../infra/config/config.js'
import type { EventType } from '../events/index.js'
import { WebhookAddressError } from './address-guard.js'
import { generateWebhookSecret } from './signature.js'
import type { WebhookEndpointRecord, WebhookStore } from './store/webhook-store.js'
import { checkWebhookUrl } from './webhook-url.js'

/** How long a rotated-out secret keeps signing beside the new one, so receivers can switch without losing a delivery. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000
/** Longest name of an endpoint, in characters. */
export const ENDPOINT_NAME_MAX_LENGTH = 100

/** Why a request to register an endpoint is refused, and which of its parts is wrong. */
export class WebhookEndpointError extends Error {
  constructor (readonly field: 'url' | 'events' | 'name', message: string) {
    super(message)
  }
}

/** An endpoint to add, checked: its URL, the events it asked for and its name. */
export interface EndpointRequest {
  url: URL
  eventTypes: EventType[]
  name: string
}

/** What adding an endpoint came to. */
export type AddedEndpoint =
  | { outcome: 'added', endpoint: WebhookEndpointRecord, secret: string }
  | { outcome: 're-enabled', endpoint: WebhookEndpointRecord }
  | { outcome: 'already-registered', endpoint: WebhookEndpointRecord }

/**
 * Checks what `webhooks add` was given, before anything is opened: the URL (scheme, and unless private
 * networks are allowed, a host that is and resolves to public addresses only), the event types (all by
 * default) and the name (the URL's host by default).
 */
export async function checkEndpointRequest (text: string, events: string | undefined, name: string | undefined, settings: WebhookSettings, known: readonly EventType[]): Promise<EndpointRequest> {
  const url = await checkWebhookUrl(text, settings).catch((error: unknown) => {
    throw error instanceof WebhookAddressError ? new WebhookEndpointError('url', error.message) : error
  })
  const eventTypes = parseEventTypes(events, known)
  return { url, eventTypes, name: checkEndpointName(name ?? url.host) }
}

/** What `webhooks update` was given, checked before anything is opened: new event types, a new name, or both. */
export function checkEndpointChange (events: string | undefined, name: string | undefined, known: readonly EventType[]): { eventTypes?: EventType[], name?: string } {
  if (events === undefined && name === undefined) throw new WebhookEndpointError('events', 'nothing to change: give --events, --name or both')
  return { ...(events === undefined ? {} : { eventTypes: parseEventTypes(events, known) }), ...(name === undefined ? {} : { name: checkEndpointName(name) }) }
}

function checkEndpointName (name: string): string {
  const trimmed = name.trim()
  if (trimmed === '' || trimmed.length > ENDPOINT_NAME_MAX_LENGTH) throw new WebhookEndpointError('name', `--name must have 1 to ${ENDPOINT_NAME_MAX_LENGTH} characters`)
  return trimmed
}

/** The event types of a comma-separated list of the `known` ones (all of them when it is left out), in their order. */
export function parseEventTypes (value: string | undefined, known: readonly EventType[]): EventType[] {
  if (value === undefined) return [...known]
  const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '')
  const unknown = names.find((name) => !known.includes(name))
  if (names.length === 0 || unknown !== undefined) {
    throw new WebhookEndpointError('events', `--events must be a comma-separated list of ${known.join(', ')}${unknown === undefined ? '' : `; "${unknown}" is not an event type`}`)
  }
  return known.filter((type) => names.includes(type))
}

/** Registers an endpoint with a new secret; the URL of a disabled endpoint re-enables that one instead, keeping its secret. */
export async function addEndpoint (store: WebhookStore, request: EndpointRequest, now: Date): Promise<AddedEndpoint> {
  const existing = (await store.listWebhookEndpoints()).find((endpoint) => endpoint.url === request.url.href)
  if (existing !== undefined && existing.disabledAt === null) return { outcome: 'already-registered', endpoint: existing }
  if (existing !== undefined) {
    const changed = await store.updateWebhookEndpoint(existing.id, { enabled: true }, now)
    return { outcome: 're-enabled', endpoint: changed?.after ?? existing }
  }
  const secret = generateWebhookSecret()
  const endpoint = await store.createWebhookEndpoint({ name: request.name, url: request.url.href, eventTypes: request.eventTypes, secret }, now)
  return { outcome: 'added', endpoint, secret }
}

/**
 * Gives an endpoint a new secret; the current one keeps signing beside it for {@link SECRET_ROTATION_OVERLAP_MS},
 * and so do the secrets earlier rotations retired, each until its own overlap ends. Undefined when no endpoint has this id.
 */
export async function rotateEndpointSecret (store: WebhookStore, id: number, now: Date): Promise<{ secret: string, previousUntil: Date } | undefined> {
  const secret = generateWebhookSecret()
  const previousUntil = new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS)
  return await store.rotateWebhookSecret(id, secret, previousUntil, now) ? { secret, previousUntil } : undefined
}
