import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'

/** An event's type name (`pet.created`): each producer names its own; the feed knows them by registration. */
export type EventType = string

/**
 * Any event of the feed, as the events capability sees it: the envelope every producer shares, its `data`
 * opaque. A producer's own type (PetCreatedEvent, …) is a precise case of it.
 */
// a type, not an interface: a serializer takes it as a plain record
export type Event<Type extends EventType = EventType, Data = unknown> = {
  id: number
  type: Type
  occurredAt: string
  data: Data
}

/** One event type, as the capability that records it registers it. */
export interface EventTypeDefinition {
  type: EventType
  /** Its schema, with an `$id` (its component's name) and `examples`; the feed serializes events of the type with it. */
  schema: TSchema
  /** The event the documents show for it. */
  example: Event
  /**
   * What the event is about: the object's kind, where its id is in the event (a JSON Pointer into it), and the
   * pattern of that id as text (a CloudEvent's `subject`), by default a positive integer's.
   */
  subject: { name: string, idPointer: string, idPattern?: string }
}

/** What a capability registers: its event types, and the schemas they refer to that are theirs alone. */
export interface EventTypeRegistration {
  types: readonly EventTypeDefinition[]
  /** Components the types' schemas refer to (PetChanges), added to the document before them. */
  schemas?: readonly TSchema[]
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every event type the feed carries, in the order the capabilities registered them (the documents' order). */
    eventTypes: EventTypeCatalogue
  }
}

/** The event types registered so far; closed by the events capability when it registers, so none comes too late to be served. */
export class EventTypeCatalogue {
  readonly #definitions: EventTypeDefinition[] = []
  readonly #schemas: TSchema[] = []
  #closed = false

  /** A catalogue of these registrations, closed. */
  static of (registrations: readonly EventTypeRegistration[]): EventTypeCatalogue {
    const catalogue = new EventTypeCatalogue()
    for (const registration of registrations) catalogue.add(registration)
    catalogue.close()
    return catalogue
  }

  add (registration: EventTypeRegistration): void {
    if (this.#closed) throw new Error(`event types ${registration.types.map(({ type }) => type).join(', ')} come after the events capability: register them before it`)
    for (const definition of registration.types) {
      if (this.#definitions.some(({ type }) => type === definition.type)) throw new Error(`event type ${definition.type} is registered twice`)
      if (typeof definition.schema.$id !== 'string') throw new Error(`the schema of event type ${definition.type} has no $id`)
    }
    this.#schemas.push(...registration.schemas ?? [], ...registration.types.map(({ schema }) => schema))
    this.#definitions.push(...registration.types)
  }

  close (): void {
    this.#closed = true
  }

  /** The type names, in registration order. */
  get types (): readonly EventType[] {
    return this.#definitions.map(({ type }) => type)
  }

  get definitions (): readonly EventTypeDefinition[] {
    return this.#definitions
  }

  /** The producers' schemas, in the order they become the document's components. */
  get schemas (): readonly TSchema[] {
    return this.#schemas
  }

  /** The definition of a registered type, or undefined. */
  definitionOf (type: string): EventTypeDefinition | undefined {
    return this.#definitions.find((definition) => definition.type === type)
  }

  /** What the events are about, as the documents' prose names them: `a pet, an order or a category` (each subject once, in registration order). */
  subjectsProse (): string {
    const subjects = [...new Set(this.#definitions.map(({ subject }) => subject.name))].map((name) => `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`)
    return subjects.length <= 1 ? subjects.join('') : `${subjects.slice(0, -1).join(', ')} or ${subjects.at(-1) ?? ''}`
  }

  /** The types as the documents' prose lists them: `` `pet.created`, `pet.updated`, … ``. */
  prose (): string {
    return this.types.map((type) => `\`${type}\``).join(', ')
  }
}

/** The app's catalogue of event types, made by the first capability that registers one. */
export function eventTypesOf (app: FastifyInstance): EventTypeCatalogue {
  if (!app.hasDecorator('eventTypes')) app.decorate('eventTypes', new EventTypeCatalogue())
  return app.eventTypes
}

/**
 * Registers a capability's event types, at its own registration and before the events capability's: the
 * feed's `type` values, the Event union, webhooks' list and the documents are built from what was registered.
 */
export function registerEventTypes (app: FastifyInstance, registration: EventTypeRegistration): void {
  eventTypesOf(app).add(registration)
}

/** The id of what an event is about (its pet's, its order's), by its type's `subject`. */
export function subjectIdOf (definition: EventTypeDefinition, event: Event): unknown {
  let value: unknown = event
  for (const token of definition.subject.idPointer.split('/').slice(1)) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[token.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined
  }
  return value
}
