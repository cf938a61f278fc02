import type { FastifyInstance } from 'fastify'
import type { Config } from '../../infra/config/config.js'
import { componentRefOf } from './event-schemas.js'
import type { EventTypeCatalogue, EventTypeDefinition } from './event-types.js'

// The ways to receive the events (the stream, webhooks, each configured bus), each declared by the capability that
// delivers it and registered here; the AsyncAPI document (the docs capability) is built from what was registered.

declare module 'fastify' {
  interface FastifyInstance {
    /** Every way this deployment delivers the events, in registration order: what the AsyncAPI document describes. */
    eventChannels: EventChannels
  }
}

/** What a channel builder makes its part of the AsyncAPI document from. */
export interface AsyncApiContext {
  readonly config: Config
  readonly eventTypes: EventTypeCatalogue
}

/** One way to receive the events (the stream, webhooks, a bus): its servers, its channel and what a consumer does on it. */
export interface AsyncApiChannel {
  /** The channel's key under `channels`. */
  readonly id: string
  /** Servers only this channel uses, by key (the service's own, `production` and `staging`, are in every document). */
  servers?: (context: AsyncApiContext) => Record<string, unknown>
  /** The channel object, its `messages` included: one per event type, keyed by {@link messageKeyOf}. */
  channel: (context: AsyncApiContext) => Record<string, unknown>
  /** The operations on it, by key: each refers to the channel and its messages as `#/channels/<id>/…`. */
  operations: (context: AsyncApiContext) => Record<string, unknown>
}

/** An event type's message key in a channel: `pet.created` → `petCreated`. */
export function messageKeyOf (type: string): string {
  return type.split(/[._-]/).map((word, i) => i === 0 ? word : `${word.charAt(0).toUpperCase()}${word.slice(1)}`).join('')
}

/** What a channel adds to each event type's message: its headers (framing fields), as a schema and for the example. */
export interface MessageFraming {
  headers: (definition: EventTypeDefinition) => Record<string, unknown>
  exampleHeaders: (definition: EventTypeDefinition) => Record<string, string>
  /** How the event travels on this channel, after the type's own description. */
  travels: string
}

/** Each registered event type as a message of a channel: its payload the type's schema (the OpenAPI document's component), with its example. */
export function eventMessages (eventTypes: EventTypeCatalogue, framing: MessageFraming): Record<string, unknown> {
  return Object.fromEntries(eventTypes.definitions.map((definition) => [messageKeyOf(definition.type), {
    name: definition.type,
    title: definition.type,
    // the type's own one line (`A pet was added (createPet).`), the schema's description after it
    summary: String((definition.schema.properties as Record<string, { description?: string }> | undefined)?.type?.description ?? definition.type),
    description: `${String(definition.schema.description ?? '')} It is about a ${definition.subject.name}: its id is at \`${definition.subject.idPointer}\` in the event. ${framing.travels}`,
    contentType: 'application/json',
    headers: framing.headers(definition),
    payload: { $ref: componentRefOf(definition.schema) },
    examples: [{ name: messageKeyOf(definition.type), summary: `A \`${definition.type}\` event.`, headers: framing.exampleHeaders(definition), payload: definition.example }],
    'x-stability': 'beta'
  }]))
}

/** The refs of a channel's messages, for its operations. */
export function messageRefs (channelId: string, eventTypes: EventTypeCatalogue): Array<{ $ref: string }> {
  return eventTypes.types.map((type) => ({ $ref: `#/channels/${channelId}/messages/${messageKeyOf(type)}` }))
}

/** What a consumer does on a channel: its `receive` operation's words, bindings and messages beyond the event types'. */
export interface ReceiveOperation {
  title: string
  summary: string
  bindings?: Record<string, unknown>
  /** Messages besides the event types' (the stream's error). */
  moreMessages?: Array<{ $ref: string }>
}

/** The `receive` operation on the channel `channelId`, taking every event type's message (and `moreMessages`). */
export function receiveOperation (channelId: string, eventTypes: EventTypeCatalogue, { title, summary, bindings, moreMessages = [] }: ReceiveOperation): Record<string, unknown> {
  return {
    action: 'receive',
    channel: { $ref: `#/channels/${channelId}` },
    title,
    summary,
    ...(bindings === undefined ? {} : { bindings }),
    messages: [...messageRefs(channelId, eventTypes), ...moreMessages],
    'x-stability': 'beta'
  }
}

/** The channels registered so far, in order; a capability registers the ways it delivers at its own registration. */
export class EventChannels {
  readonly #channels: AsyncApiChannel[] = []

  add (channel: AsyncApiChannel): void {
    if (this.#channels.some(({ id }) => id === channel.id)) throw new Error(`the event channel ${channel.id} is registered twice`)
    this.#channels.push(channel)
  }

  get list (): readonly AsyncApiChannel[] {
    return this.#channels
  }
}

/** Registers one way the events are delivered (after the events capability: it decorates the registry). */
export function registerEventChannel (app: FastifyInstance, channel: AsyncApiChannel): void {
  app.eventChannels.add(channel)
}
