import type { components, operations } from './generated/openapi.js'

// the type of `id`, `categoryId` and `petId`: a number, or a bigint beyond 2^53 (see exact-json.ts)
export type { Int64 } from './exact-json.js'

/** An animal as the service returns it. */
export type Pet = components['schemas']['Pet']

/** A pet to add; `status` defaults to `available` on the service. */
export type NewPet = components['schemas']['NewPet']

/** The fields of a pet to change (a JSON Merge Patch); fields left out keep their value. */
export type PetPatch = components['schemas']['PetPatch']

/** Availability of an animal: `available`, `pending` or `sold`. */
export type PetStatus = components['schemas']['PetStatus']

/** The body of every error answer of the service. */
export type ErrorBody = components['schemas']['Error']

/** The codes the service puts in an Error body (a stable set; new ones may be added). */
export type ServiceErrorCode = ErrorBody['code']

/** The query of `listPets`: page size, status filter and the cursor of a previous page. */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>

/** What `updatePet` answers: the pet as it now is, and its entity tag. */
export interface UpdatedPet {
  pet: Pet
  /**
   * The pet's current `ETag` (the one `getPet` sends for it): pass it as `ifMatch` to the next
   * `updatePet` to make that change only if nobody changed the pet in between.
   */
  etag: string
}

/** One page of `listPets`. */
export interface PetPage {
  /** The pets of this page, in `id` order. */
  pets: Pet[]
  /**
   * Where the next page starts, taken from the answer's `Link: <…>; rel="next"`; absent on the
   * last page. Pass it back as `cursor` with the same `status` (a cursor is bound to its filter).
   */
  nextCursor?: string
}

/**
 * A change of the catalogue, as the feed carries it (the document's `Event`, named so that it does
 * not hide the global `Event`); tell the kinds apart by `type`.
 */
export type PetStoreEvent = components['schemas']['Event']

/** A pet was added: `data.pet` is the pet as `createPet` answered it. */
export type PetCreatedEvent = components['schemas']['PetCreatedEvent']

/** A pet was changed: `data.pet` is the pet after the change, `data.previous` the values it replaced. */
export type PetUpdatedEvent = components['schemas']['PetUpdatedEvent']

/** The fields a change changed, each with its value before the change. */
export type PetChanges = components['schemas']['PetChanges']

/** The kinds of event the feed carries (`PetStoreEvent['type']`): the pet events and the order events. */
export type EventType = PetStoreEvent['type']

/**
 * The query of `listEvents`: the position to read after, the page size and the type filter, one type
 * or several (sent as the parameter repeated, `type=pet.created&type=order.updated`).
 */
export type ListEventsQuery = Omit<NonNullable<operations['listEvents']['parameters']['query']>, 'type'> & {
  type?: EventType | readonly EventType[]
}

/** One page of `listEvents`. */
export interface EventPage {
  /** The events of this page, in `id` order; empty when nothing happened after the position asked for. */
  events: PetStoreEvent[]
  /**
   * Where the next page starts, taken from the answer's `Link: <…>; rel="next"` (always present):
   * the id of the last event of this page or, on an empty page, where this page started. Pass it back
   * as `after` with the same `type` (now, or after a pause when the page was empty), and store it to
   * resume after a restart.
   */
  nextAfter: number
}

/** An order for one pet (beta); while `placed` or `approved` (open), its pet is `pending`. */
export type Order = components['schemas']['Order']

/** An order to place: the `available` pet it is for. */
export type NewOrder = components['schemas']['NewOrder']

/** The change of an order: its new `status`. */
export type OrderPatch = components['schemas']['OrderPatch']

/** Where an order is: `placed`, `approved`, `delivered` or `cancelled` (the last two are final). */
export type OrderStatus = components['schemas']['OrderStatus']

/** How many pets are in each status, exact at the moment of the read. */
export type Inventory = components['schemas']['Inventory']

/** The query of `listOrders`: page size, status and pet filters, and the cursor of a previous page. */
export type ListOrdersQuery = NonNullable<operations['listOrders']['parameters']['query']>

/** What `getOrder` and `updateOrder` answer: the order as it now is, and its entity tag. */
export interface TaggedOrder {
  order: Order
  /** The order's current `ETag`: pass it as `ifMatch` to `updateOrder` to change it only if nobody did in between. */
  etag: string
}

/** One page of `listOrders`. */
export interface OrderPage {
  /** The orders of this page, in `id` order. */
  orders: Order[]
  /** Where the next page starts (from the `next` link); absent on the last page. Pass it back as `cursor` with the same filters. */
  nextCursor?: string
}

/** A webhook endpoint (beta): where events are delivered, its settings and its health; never its secret. */
export type WebhookEndpoint = components['schemas']['WebhookEndpoint']

/** An endpoint as `webhookEndpoints.create` answers it: with its `secret` (`hmac-sha256`) shown once. */
export type CreatedWebhookEndpoint = components['schemas']['CreatedWebhookEndpoint']

export type NewWebhookEndpoint = components['schemas']['NewWebhookEndpoint']

export type WebhookEndpointPatch = components['schemas']['WebhookEndpointPatch']

export type RotatedWebhookSecret = components['schemas']['RotatedWebhookSecret']

export type WebhookTestResult = components['schemas']['WebhookTestResult']

export type WebhookAttempt = components['schemas']['WebhookAttempt']

export type WebhookRecovery = components['schemas']['WebhookRecovery']

export type WebhookRecovered = components['schemas']['WebhookRecovered']

export type WebhookResent = components['schemas']['WebhookResent']

export type ListWebhookEndpointsQuery = NonNullable<operations['listWebhookEndpoints']['parameters']['query']>

export type ListWebhookAttemptsQuery = NonNullable<operations['listWebhookAttempts']['parameters']['query']>

export interface TaggedWebhookEndpoint {
  endpoint: WebhookEndpoint
  /** The endpoint's current `ETag`: pass it as `ifMatch` to `webhookEndpoints.update` to change it only if nobody changed its settings in between. */
  etag: string
}

export interface WebhookEndpointPage {
  /** The endpoints of this page, in `id` order. */
  endpoints: WebhookEndpoint[]
  /** Where the next page starts (from `Link: <…>; rel="next"`); absent on the last page. */
  nextCursor?: string
}

export interface WebhookAttemptPage {
  /** The attempts of this page, newest first. */
  attempts: WebhookAttempt[]
  /** Where the next page starts (from `Link: <…>; rel="next"`); absent on the last page. Pass it back with the same `status`. */
  nextCursor?: string
}

/** A category (beta): a `categoryId` pets carry, or one given a name, or both, with its pets by status; `name` is `null` while none was given. */
export type Category = components['schemas']['Category']

/** What `categories.put` sets. */
export type CategoryName = components['schemas']['CategoryName']

/** A `category.updated` event: a category named or renamed. */
export type CategoryUpdatedEvent = components['schemas']['CategoryUpdatedEvent']

export type ListCategoriesQuery = NonNullable<operations['listCategories']['parameters']['query']>

export interface CategoryPage {
  /** The categories of this page, in `id` order (int64 order: negative ids first). */
  categories: Category[]
  /** Where the next page starts (from `Link: <…>; rel="next"`); absent on the last page. */
  nextCursor?: string
}

/** What `categories.get` and `categories.put` answer: the category and its entity tag. */
export interface TaggedCategory {
  category: Category
  /** The category's current `ETag`: it changes when its name or its pets do. */
  etag: string
}
