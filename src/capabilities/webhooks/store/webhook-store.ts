import type { Event, EventType } from '../../events/index.js'

/**
 * What `restore` runs on a SQLite backup before it takes the database's place: every endpoint lease the
 * backup holds belonged to a process of the replaced database, none of which runs now (restore has sole use).
 * Left in place, a lease would hold the endpoint's deliveries back until it ran out (2 × WEBHOOK_TIMEOUT_MS + 5 s).
 */
export const RELEASE_HELD_LEASES_SQLITE = 'UPDATE webhook_endpoints SET lease_token = NULL, lease_until = NULL WHERE lease_token IS NOT NULL'

/** An endpoint to register: where to send which events, and the secret that signs them. */
export interface NewWebhookEndpoint {
  name: string
  url: string
  eventTypes: readonly EventType[]
  /** `whsec_<base64>`, the Standard Webhooks form. */
  secret: string
}

/** An endpoint as `webhooks list` shows it: never its secret. */
export interface WebhookEndpointRecord {
  id: number
  name: string
  url: string
  eventTypes: EventType[]
  createdAt: string
  disabledAt: string | null
  /** Deliveries not yet made nor given up. */
  waiting: number
  /** Deliveries given up after the whole retry schedule. */
  failed: number
  lastSuccessAt: string | null
  lastFailureAt: string | null
  /** The last failure: the status a receiver answered, or the error (never a secret). */
  lastFailure: string | null
}

/** What `webhooks update`, `disable` and `enable` change; what is left out stays as it is. */
export interface WebhookEndpointChange {
  name?: string
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

/** An endpoint before and after a change. */
export interface ChangedWebhookEndpoint {
  before: WebhookEndpointRecord
  after: WebhookEndpointRecord
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

/** The webhook endpoints as operators manage them (`npx petstore webhooks …`). */
export interface WebhookEndpointStore {
  /** Registers an endpoint; only events recorded after this call are sent to it. */
  createWebhookEndpoint (endpoint: NewWebhookEndpoint, now: Date): Promise<WebhookEndpointRecord>
  listWebhookEndpoints (): Promise<WebhookEndpointRecord[]>
  /** Deletes an endpoint and its queue; false when no endpoint has this id. */
  removeWebhookEndpoint (id: number): Promise<boolean>
  /**
   * Signs with `secret` from now on, and with the current secret too until `previousUntil`, beside the
   * secrets earlier rotations retired until their own ends (those ended by `now` are dropped); false when
   * no endpoint has this id.
   */
  rotateWebhookSecret (id: number, secret: string, previousUntil: Date, now: Date): Promise<boolean>
  /**
   * Changes an endpoint in one transaction, keeping its secret and its queue (see {@link WebhookEndpointChange});
   * what it was and what it is now, or undefined when no endpoint has this id.
   */
  updateWebhookEndpoint (id: number, change: WebhookEndpointChange, now: Date): Promise<ChangedWebhookEndpoint | undefined>
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

/** Both roles, as each engine implements them on the database's connection. */
export type WebhookStore = WebhookEndpointStore & WebhookDeliveryStore
