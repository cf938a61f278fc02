import type { EventType } from '../../events/index.js'
import { rowToEvent, type EventRow } from '../../events/index.js'
import type { SigningScheme } from '../signature.js'
import type { WebhookAttemptRecord, WebhookTestTarget } from './webhook-delivery-log.js'
import type { ClaimedWebhookEndpoint, DueWebhookDelivery, WebhookEndpointRecord } from './webhook-store.js'

/** A webhook_endpoints row as `list` reads it, with its queue counted; times in ms on both engines. */
export interface WebhookEndpointRow {
  id: number
  name: string
  url: string
  event_types: string
  description: string | null
  rate_limit: number | null
  signing: SigningScheme
  public_key: string | null
  created_at: number
  disabled_at: number | null
  last_success_at: number | null
  last_failure_at: number | null
  last_failure: string | null
  waiting: number
  failed: number
}

/**
 * The columns of {@link WebhookEndpointRow}, the endpoint's table named `w`. Waiting: its deliveries queued and not
 * given up, and the events of its types recorded past its schedule's cursor, which no delivery stands for yet (a
 * disabled endpoint's are scheduled when it is enabled). `wantsEventType` is the engine's test that the event `e`
 * is of a type `w.event_types` lists.
 */
export function webhookEndpointColumns (wantsEventType: string): string {
  return 'w.id, w.name, w.url, w.event_types, w.description, w.rate_limit, w.signing, w.public_key, w.created_at, w.disabled_at, ' +
    'w.last_success_at, w.last_failure_at, w.last_failure, ' +
    '(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.failed_at IS NULL) + ' +
    `(SELECT count(*) FROM events e WHERE e.id > w.scheduled_through AND ${wantsEventType}) AS waiting, ` +
    '(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.failed_at IS NOT NULL) AS failed'
}

/** The columns a freshly inserted endpoint returns (no queue yet), in the shape of {@link WebhookEndpointRow}. */
export const NEW_WEBHOOK_ENDPOINT_COLUMNS = 'id, name, url, event_types, description, rate_limit, signing, public_key, created_at, disabled_at, ' +
  'last_success_at, last_failure_at, last_failure, 0 AS waiting, 0 AS failed'

/** A webhook_endpoints row as a claim returns it. */
export interface ClaimedWebhookEndpointRow {
  id: number
  url: string
  event_types: string
  secret: string
  /** JSON: the secrets rotations retired, `[{ "secret", "until" }]`, until in ms; expired ones pruned at the next rotation. */
  retired_secrets: string
  lease_token: string
  failing_since: number | null
  rate_limit: number | null
}

/** The columns of {@link ClaimedWebhookEndpointRow}. */
export const CLAIMED_WEBHOOK_ENDPOINT_COLUMNS = 'id, url, event_types, secret, retired_secrets, lease_token, failing_since, rate_limit'

/** A delivery with its event (LEFT JOINed: the event columns are null when retention deleted it). */
export type DueWebhookDeliveryRow = { delivery_event_id: number, attempts: number } & { [column in keyof EventRow]: EventRow[column] | null }

/** The columns of {@link DueWebhookDeliveryRow}, the deliveries named `d` and the events `e`. */
export const DUE_WEBHOOK_DELIVERY_COLUMNS = 'd.event_id AS delivery_event_id, d.attempts, e.id, e.type, e.occurred_at, e.data'

/** Event types as the event_types column keeps them: comma-separated. */
export function joinEventTypes (types: readonly EventType[]): string {
  return types.join(',')
}

export function splitEventTypes (column: string): EventType[] {
  return column.split(',').filter((type) => type !== '')
}

const isoOrNull = (ms: number | null): string | null => ms === null ? null : new Date(ms).toISOString()

export function rowToWebhookEndpoint (row: WebhookEndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    eventTypes: splitEventTypes(row.event_types),
    description: row.description,
    rateLimit: row.rate_limit,
    signing: row.signing,
    publicKey: row.public_key,
    createdAt: new Date(row.created_at).toISOString(),
    disabledAt: isoOrNull(row.disabled_at),
    waiting: Number(row.waiting),
    failed: Number(row.failed),
    lastSuccessAt: isoOrNull(row.last_success_at),
    lastFailureAt: isoOrNull(row.last_failure_at),
    lastFailure: row.last_failure
  }
}

/** A secret a rotation retired, and until when (ms) it still signs. */
interface RetiredSecret { secret: string, until: number }

/** The secrets that sign as of `now`: the current one, then each retired one whose overlap is still open, newest first. */
export function signingSecrets (row: { secret: string, retired_secrets: string }, now: Date): string[] {
  const retired = JSON.parse(row.retired_secrets) as RetiredSecret[]
  return [row.secret, ...retired.filter(({ until }) => until > now.getTime()).reverse().map(({ secret }) => secret)]
}

/** The claim as of `now`, with the secrets that sign then. */
export function rowToClaimedWebhookEndpoint (row: ClaimedWebhookEndpointRow, now: Date): ClaimedWebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    eventTypes: splitEventTypes(row.event_types),
    secrets: signingSecrets(row, now),
    leaseToken: row.lease_token,
    failingSince: row.failing_since,
    rateLimit: row.rate_limit
  }
}

export function rowToDueWebhookDelivery (row: DueWebhookDeliveryRow): DueWebhookDelivery {
  return {
    eventId: row.delivery_event_id,
    attempts: row.attempts,
    event: row.id === null ? undefined : rowToEvent(row as EventRow)
  }
}

/** A webhook_attempts row with its event's type (LEFT JOINed: null when retention deleted the event); times in ms. */
export interface WebhookAttemptRow {
  id: number
  event_id: number
  event_type: EventType | null
  attempt: number
  attempted_at: number
  duration_ms: number
  status: number | null
  error: string | null
  next_attempt_at: number | null
}

/** The columns of {@link WebhookAttemptRow}, the attempts named `a` and the events `e`. */
export const WEBHOOK_ATTEMPT_COLUMNS = 'a.id, a.event_id, e.type AS event_type, a.attempt, a.attempted_at, a.duration_ms, a.status, a.error, a.next_attempt_at'

/** An endpoint's row as a test message needs it. */
export interface WebhookTestTargetRow {
  url: string
  secret: string
  retired_secrets: string
  disabled_at: number | null
}

export function rowToWebhookAttempt (row: WebhookAttemptRow): WebhookAttemptRecord {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    attemptedAt: new Date(row.attempted_at).toISOString(),
    durationMs: row.duration_ms,
    result: row.error === null ? 'delivered' : row.next_attempt_at === null ? 'failed' : 'retrying',
    status: row.status,
    error: row.error,
    nextAttemptAt: isoOrNull(row.next_attempt_at)
  }
}

export function rowToWebhookTestTarget (row: WebhookTestTargetRow, now: Date): WebhookTestTarget {
  return { url: row.url, secrets: signingSecrets(row, now), disabled: row.disabled_at !== null }
}

/**
 * A delivery put back in line (`webhooks retry`, a resend, a recovery): due at once (0, whatever clock the dispatcher
 * reads), the whole retry schedule again, the attempts made so far kept in `retried_attempts` so the log's numbers go on.
 */
export const REQUEUE_DELIVERY = 'failed_at = NULL, retried_attempts = retried_attempts + attempts, attempts = 0, next_attempt_at = 0'

/** The columns a resend inserts, in the order of its values: endpoint, event, attempts, due, retried attempts. */
export const RESEND_DELIVERY_COLUMNS = 'endpoint_id, event_id, attempts, next_attempt_at, retried_attempts'
