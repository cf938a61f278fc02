import type { EventType } from '../../events/index.js'

/** What an attempt came to: delivered; retrying (failed, another attempt is scheduled); failed (failed and given up). */
export type WebhookAttemptResult = 'delivered' | 'retrying' | 'failed'

/** One delivery attempt, as `webhooks deliveries` shows it. */
export interface WebhookAttemptRecord {
  /** Its place in the log: later attempts have higher ids (a page's position). */
  id: number
  eventId: number
  /** Null when retention has deleted the event (the delivery was given up for that). */
  eventType: EventType | null
  /** 1 for a delivery's first attempt; the count goes on after `webhooks retry` (4, 5 … after three). */
  attempt: number
  /** When it was sent. */
  attemptedAt: string
  durationMs: number
  result: WebhookAttemptResult
  /** The receiver's status, when it answered. */
  status: number | null
  /** Why it failed (`answered 503`, `timed out`, `ECONNREFUSED`, `refused: …`); null when delivered. */
  error: string | null
  /** When the delivery is tried again (`retrying` only): never sooner than the receiver's `Retry-After`. */
  nextAttemptAt: string | null
}

/** Which attempts to list, newest first. */
export interface WebhookAttemptQuery {
  /** Only the attempts that failed (retrying or given up), or only those delivered; all when left out. */
  result?: 'failed' | 'succeeded'
  /** Only attempts older than this one (the id of the last attempt of the page before). */
  beforeId?: number
  limit: number
}

/** What `webhooks retry` did. */
export interface RequeuedWebhookDeliveries {
  /** Given-up deliveries put back in line, due at once. */
  requeued: number
  /** Given-up deliveries left as they are: retention has deleted their events, there is nothing left to send. */
  expired: number
  /** The endpoint is disabled: nothing is sent to it until it is enabled. */
  disabled: boolean
}

/** Where a test message goes and what signs it. */
export interface WebhookTestTarget {
  url: string
  /** The secrets that sign now: the current one, and those a rotation retired less than its overlap ago. */
  secrets: string[]
  disabled: boolean
}

/** What a resend came to. */
export type ResentWebhookEvent =
  /** Due at once, before the endpoint's later events; `attempt`: the number its next attempt will have in the log. */
  | { outcome: 'queued', attempt: number }
  /** Not yet scheduled for the endpoint (recorded moments ago): it is sent in its turn anyway, nothing was added. */
  | { outcome: 'waiting' }
  | { outcome: 'endpoint_not_found' }
  | { outcome: 'endpoint_disabled' }
  /** No event has the id: never recorded, or deleted by retention. */
  | { outcome: 'event_not_found' }
  /** The event is of a type the endpoint does not receive. */
  | { outcome: 'type_not_received', type: EventType, received: EventType[] }

/** What a recovery came to. */
export type RecoveredWebhookDeliveries =
  /** `queued` deliveries due at once, event ids `firstEventId` to `lastEventId` (none when 0), sent in id order. */
  | { outcome: 'queued', queued: number, firstEventId: number | null, lastEventId: number | null }
  | { outcome: 'endpoint_not_found' }
  | { outcome: 'endpoint_disabled' }

/**
 * What operators read and do beside the dispatcher (`npx petstore webhooks deliveries | retry | test`): the
 * log of attempts (written by `recordWebhookAttempts`, in the same transaction) and the given-up deliveries.
 */
export interface WebhookDeliveryLog {
  /** The endpoint's attempts, newest first, at most `limit`, as `query` filters them; undefined when no endpoint has this id. */
  listWebhookAttempts (endpointId: number, query: WebhookAttemptQuery): Promise<WebhookAttemptRecord[] | undefined>
  /**
   * Puts every given-up delivery of the endpoint whose event is still retained back in line: due at once,
   * the whole retry schedule again (the log's attempt numbers go on), delivered in event-id order, oldest
   * first; wakes the dispatchers. Undefined when no endpoint has this id.
   */
  requeueGivenUpWebhookDeliveries (endpointId: number): Promise<RequeuedWebhookDeliveries | undefined>
  /** The endpoint's URL and the secrets that sign as of `now`; undefined when no endpoint has this id. */
  findWebhookTestTarget (endpointId: number, now: Date): Promise<WebhookTestTarget | undefined>
  /**
   * Puts the event in line for the endpoint again, due at once with the whole retry schedule (whether it was
   * delivered, waiting or given up; the log's attempt numbers go on); wakes the dispatchers. Refused, changing
   * nothing, for a disabled endpoint and an event it does not receive.
   */
  resendWebhookEvent (endpointId: number, eventId: number): Promise<ResentWebhookEvent>
  /**
   * Puts back in line, due at once with the whole retry schedule, every delivery to the endpoint not yet made
   * whose event is retained and had a failed attempt from `since` to before `until` (retrying or given up),
   * in one transaction; wakes the dispatchers. A delivery made since is not sent again. Refused for a disabled endpoint.
   */
  recoverWebhookDeliveries (endpointId: number, since: Date, until: Date): Promise<RecoveredWebhookDeliveries>
}
