import type { Event, EventType } from '../../events/index.js'
import type { IdempotencyCompletion } from '../../idempotency/index.js'
import type { SigningScheme } from '../signature.js'

/**
 * What `restore` runs on a SQLite backup before it takes the database's place: every endpoint lease the
 * backup holds belonged to a process of the replaced database, none of which runs now (restore has sole use).
 * Left in place, a lease would hold the endpoint's deliveries back until it ran out (2 × WEBHOOK_TIMEOUT_MS + 5 s).
 */
export const RELEASE_HELD_LEASES_SQLITE = 'UPDATE webhook_endpoints SET lease_token = NULL, lease_until = NULL WHERE lease_token IS NOT NULL'

/** An endpoint to register: where to send which events, and what signs them. */
export interface NewWebhookEndpoint {
  name: string
  url: string
  eventTypes: readonly EventType[]
  /** `whsec_<base64>` (HMAC-SHA256) or `whsk_<base64>` (an ed25519 private key), the Standard Webhooks forms. */
  secret: string
  description?: string
  /** The most deliveries a second it is sent; none: no limit. */
  rateLimit?: number
  /** Default `hmac-sha256`. */
  signing?: SigningScheme
  /** The ed25519 public key (`whpk_…`) of `secret`. */
  publicKey?: string
  /** Registered disabled: nothing is sent until it is enabled, then the events recorded since it was registered. */
  disabled?: boolean
}

/** An endpoint as `webhooks list` shows it: never its secret. */
export interface WebhookEndpointRecord {
  id: number
  name: string
  url: string
  eventTypes: EventType[]
  description: string | null
  /** The most deliveries a second it is sent; null: no limit. */
  rateLimit: number | null
  signing: SigningScheme
  /** The ed25519 public key receivers verify with (`whpk_…`); null for `hmac-sha256`. */
  publicKey: string | null
  createdAt: string
  disabledAt: string | null
  /**
   * Deliveries not yet made nor given up: those queued, and the events of its types recorded since its last
   * schedule (a disabled endpoint's are what enabling it sends beside its queue).
   */
  waiting: number
  /** Deliveries given up after the whole retry schedule. */
  failed: number
  lastSuccessAt: string | null
  lastFailureAt: string | null
  /** The last failure: the status a receiver answered, or the error (never a secret). */
  lastFailure: string | null
}

/** Where a page of endpoints starts, and how long it is. */
export interface WebhookEndpointPage {
  afterId: number
  limit: number
}

/** What `webhooks update`, `disable`, `enable` and a PATCH change; what is left out stays as it is. */
export interface WebhookEndpointChange {
  name?: string
  /** A URL already checked (the address rules); the deliveries waiting go there from the next turn on. */
  url?: string
  /** null: none. */
  description?: string | null
  /** null: no limit; from the endpoint's next turn on. */
  rateLimit?: number | null
  /**
   * The types sent from now on. Deliveries of a type no longer wanted are dropped from the queue (waiting and
   * given up alike: an attempt already in flight may still arrive); a type newly wanted applies to the events
   * recorded after the change, as `add` does; the events recorded before it of a type still wanted are sent.
   */
  eventTypes?: readonly EventType[]
  /**
   * false: nothing more is sent (a turn in flight ends with its attempts in flight), the queue waits. true, on a
   * disabled endpoint: its failure streak is forgotten and its waiting deliveries are due at once, so they go
   * out before the events recorded while it was disabled, all in event-id order.
   */
  enabled?: boolean
}

/** What a change came to: made (what the endpoint was and is now: maybe the same), or not, and why. */
export type WebhookEndpointUpdate =
  | { outcome: 'changed', before: WebhookEndpointRecord, after: WebhookEndpointRecord }
  | { outcome: 'not_found' }
  /** The precondition (a PATCH's `If-Match`) did not hold on the endpoint as it was: nothing changed. */
  | { outcome: 'precondition_failed', current: WebhookEndpointRecord }

/** What a create checks and completes in its transaction besides the insert. */
export interface NewWebhookEndpointOptions {
  /** The most endpoints there may be, this one included. */
  maxEndpoints?: number
  /** The claim of the request's `Idempotency-Key`, and the answer to store with it (the 201's body) for the endpoint created. */
  completing?: { claim: IdempotencyCompletion, answer: (created: WebhookEndpointRecord) => string }
}

/** Thrown by a create when the most endpoints allowed are registered already: nothing was created. */
export class WebhookEndpointLimitError extends Error {
  constructor (readonly limit: number) {
    super(`at most ${limit} webhook endpoints may be registered`)
    this.name = 'WebhookEndpointLimitError'
  }
}

/** An endpoint one instance holds the lease of, with what it needs to deliver. */
export interface ClaimedWebhookEndpoint {
  id: number
  url: string
  eventTypes: EventType[]
  /** The secrets that sign each request: the current one, and during a rotation the previous one. */
  secrets: string[]
  /** The lease's token: every write under the lease names it, so a lease taken over is not written through. */
  leaseToken: string
  /** The first failure since the last success (ms), or null: an endpoint failing for long is disabled. */
  failingSince: number | null
  /** The most deliveries a second it is sent; null: no limit. */
  rateLimit: number | null
}

/** The oldest delivery of an endpoint that is due, with its event (undefined when retention deleted it). */
export interface DueWebhookDelivery {
  eventId: number
  /** Attempts made so far. */
  attempts: number
  event: Event | undefined
}

/** When an attempt was sent, how long it took and the receiver's status (none when it did not answer): what the delivery log keeps. */
export interface WebhookAttemptMade {
  startedAt: Date
  durationMs: number
  status: number | undefined
}

/** What one attempt came to. */
export type WebhookAttemptOutcome = WebhookAttemptMade & (
  | { delivered: true }
  /** `retryAt` undefined: the schedule is exhausted and the delivery is given up. `disable`: the endpoint has failed for too long. */
  | { delivered: false, error: string, retryAt: Date | undefined, disable: boolean })

/** The webhook endpoints as operators and integrators manage them (`npx petstore webhooks …`, `/v1/webhook-endpoints`). */
export interface WebhookEndpointStore {
  /**
   * Registers an endpoint; only events recorded after this call are sent to it. With `maxEndpoints`, throws a
   * {@link WebhookEndpointLimitError} when that many are registered (counted and inserted under one lock); with
   * `completing`, completes that `Idempotency-Key` claim in the same transaction (IdempotencyClaimLostError when
   * it is no longer held: nothing is registered).
   */
  createWebhookEndpoint (endpoint: NewWebhookEndpoint, now: Date, options?: NewWebhookEndpointOptions): Promise<WebhookEndpointRecord>
  findWebhookEndpoint (id: number): Promise<WebhookEndpointRecord | undefined>
  /** The endpoints in id order: all of them, or one page (`limit` of those after `afterId`). */
  listWebhookEndpoints (page?: WebhookEndpointPage): Promise<WebhookEndpointRecord[]>
  /** Deletes an endpoint, its queue and its attempts; false when no endpoint has this id. */
  removeWebhookEndpoint (id: number): Promise<boolean>
  /**
   * Signs with `secret` from now on (its public key `publicKey` for ed25519), and with the current secret too until
   * `previousUntil`, beside the secrets earlier rotations retired until their own ends (those ended by `now` are
   * dropped); false when no endpoint has this id.
   */
  rotateWebhookSecret (id: number, secret: string, previousUntil: Date, now: Date, publicKey?: string): Promise<boolean>
  /**
   * Changes an endpoint in one transaction, keeping its secret and its queue (see {@link WebhookEndpointChange}),
   * when `precondition` (if any) holds on it as it is inside that transaction.
   */
  updateWebhookEndpoint (id: number, change: WebhookEndpointChange, now: Date, precondition?: (current: WebhookEndpointRecord) => boolean): Promise<WebhookEndpointUpdate>
  /** Whether any endpoint is enabled: until one is, nothing is delivered (a read, no lock taken). */
  hasEnabledWebhookEndpoints (): Promise<boolean>
}

/**
 * The delivery queue, kept in the database beside what it delivers (never only in memory). Safe for every
 * instance at once: an endpoint is delivered to by the one instance that holds its lease.
 */
export interface WebhookDeliveryStore {
  /**
   * Takes the lease of an enabled endpoint with work to do (events to schedule or a due delivery) that nobody
   * holds, the one served longest ago first; with `includeFailing` false, only among endpoints not failing.
   * Reads first, and writes only when it found one: an idle instance writes nothing.
   */
  claimWebhookEndpoint (now: Date, leaseMs: number, token: string, includeFailing: boolean): Promise<ClaimedWebhookEndpoint | undefined>
  /** Creates the deliveries of the events recorded since the endpoint's last schedule that it asked for; returns how many. */
  scheduleWebhookDeliveries (claim: ClaimedWebhookEndpoint, limit: number): Promise<number>
  /** Up to `limit` due deliveries, smallest event ids first, and renews the lease to `now + leaseMs` (none when the lease was lost). */
  nextDueWebhookDeliveries (claim: ClaimedWebhookEndpoint, now: Date, leaseMs: number, limit: number): Promise<DueWebhookDelivery[]>
  /**
   * Records attempts in one transaction, each in the delivery log too: a delivered one is removed from the queue; a failed one
   * waits for `retryAt`, or is given up.
   */
  recordWebhookAttempts (claim: ClaimedWebhookEndpoint, attempts: ReadonlyArray<{ eventId: number, outcome: WebhookAttemptOutcome }>, now: Date): Promise<void>
  /**
   * Gives the lease back: any instance may take the endpoint from `until` on (now; later when the receiver
   * asked to be left alone). It is also when the endpoint was last served, which orders the claims.
   */
  releaseWebhookEndpoint (claim: ClaimedWebhookEndpoint, until: Date): Promise<void>
  /** When the oldest event still waiting for a delivery (made or not yet scheduled) occurred; undefined when none waits. */
  oldestUndeliveredEventAt (): Promise<Date | undefined>
}

/** Both roles on one object (`app.webhookStore`), each implemented by its own class per engine. */
export type WebhookStore = WebhookEndpointStore & WebhookDeliveryStore
