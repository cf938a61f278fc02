import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { EventType } from '../../events/index.js'
import type {
  RecoveredWebhookDeliveries, RequeuedWebhookDeliveries, ResentWebhookEvent, WebhookAttemptQuery, WebhookAttemptRecord, WebhookDeliveryLog, WebhookTestTarget
} from './webhook-delivery-log.js'
import {
  REQUEUE_DELIVERY, RESEND_DELIVERY_COLUMNS, rowToWebhookAttempt, rowToWebhookTestTarget, splitEventTypes, WEBHOOK_ATTEMPT_COLUMNS,
  type WebhookAttemptRow, type WebhookTestTargetRow
} from './webhook-rows.js'
import { NOTIFY_DELIVERIES_DUE as NOTIFY } from './deliveries-due.js'

// Each operation is one statement, so one snapshot
const SQL = {
  findEndpoint: { text: 'SELECT url, secret, retired_secrets, disabled_at FROM webhook_endpoints WHERE id = $1' },
  // one row per attempt, newest first down the (endpoint_id, id) index, before $4, with the endpoint's row: an endpoint
  // without attempts is one row of nulls, an unknown id none. $2 'failed' or 'succeeded' keeps those only
  listAttempts: {
    text: `SELECT a.id IS NOT NULL AS found, ${WEBHOOK_ATTEMPT_COLUMNS} FROM webhook_endpoints w LEFT JOIN LATERAL (` +
      "SELECT * FROM webhook_attempts a WHERE a.endpoint_id = w.id AND a.id < $4 AND ($2 = '' OR ($2 = 'failed') = (a.error IS NOT NULL)) ORDER BY a.id DESC LIMIT $3" +
      ') a ON true LEFT JOIN events e ON e.id = a.event_id WHERE w.id = $1 ORDER BY a.id DESC'
  },
  // the endpoint and the event in one snapshot, the endpoint's row locked so that its schedule waits; then the resend
  findResendTarget: {
    text: 'SELECT w.disabled_at, w.event_types, w.scheduled_through, (SELECT type FROM events WHERE id = $2) AS event_type ' +
      'FROM webhook_endpoints w WHERE w.id = $1 FOR UPDATE OF w'
  },
  // due at once, the whole schedule again; a delivery made before is one again, its attempts numbered on from the log's
  resendDelivery: {
    text: `WITH resent AS (INSERT INTO webhook_deliveries AS d (${RESEND_DELIVERY_COLUMNS}) VALUES ($1, $2, 0, 0, ` +
      '(SELECT coalesce(max(attempt), 0) FROM webhook_attempts WHERE endpoint_id = $1 AND event_id = $2)) ' +
      `ON CONFLICT (endpoint_id, event_id) DO UPDATE SET ${REQUEUE_DELIVERY.replaceAll('retried_attempts + attempts', 'd.retried_attempts + d.attempts')} ` +
      `RETURNING d.retried_attempts + d.attempts + 1 AS attempt) SELECT attempt, ${NOTIFY} FROM resent`
  },
  // one statement: the deliveries whose event is retained and had a failed attempt from $2 to before $3 are
  // requeued and counted from one snapshot, all or (after a crash) none
  recover: {
    text: 'WITH endpoint AS (SELECT id, disabled_at FROM webhook_endpoints WHERE id = $1), ' +
      `requeued AS (UPDATE webhook_deliveries d SET ${REQUEUE_DELIVERY.replaceAll('retried_attempts + attempts', 'd.retried_attempts + d.attempts')} ` +
      'FROM endpoint WHERE endpoint.disabled_at IS NULL AND d.endpoint_id = endpoint.id AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) ' +
      'AND EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.endpoint_id = d.endpoint_id AND a.event_id = d.event_id AND a.error IS NOT NULL ' +
      'AND a.attempted_at >= $2::bigint AND a.attempted_at < $3::bigint) RETURNING d.event_id) ' +
      'SELECT endpoint.disabled_at IS NOT NULL AS disabled, (SELECT count(*)::int FROM requeued) AS queued, (SELECT min(event_id) FROM requeued) AS first, ' +
      `(SELECT max(event_id) FROM requeued) AS last, CASE WHEN EXISTS (SELECT 1 FROM requeued) THEN ${NOTIFY} END AS notified FROM endpoint`
  },
  // due at once (0), whatever clock the dispatcher reads; the dispatcher takes due deliveries in event-id
  // order. The count of given-up deliveries reads the snapshot from before the update: those requeued are in
  // it. The notification wakes every instance's dispatcher at commit
  requeueGivenUp: {
    text: 'WITH endpoint AS (SELECT id, disabled_at FROM webhook_endpoints WHERE id = $1), ' +
      `requeued AS (UPDATE webhook_deliveries d SET ${REQUEUE_DELIVERY.replaceAll('retried_attempts + attempts', 'd.retried_attempts + d.attempts')} FROM endpoint ` +
      'WHERE d.endpoint_id = endpoint.id AND d.failed_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) RETURNING 1) ' +
      'SELECT (SELECT disabled_at IS NOT NULL FROM endpoint) AS disabled, (SELECT count(*)::int FROM requeued) AS requeued, ' +
      '(SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.failed_at IS NOT NULL) - (SELECT count(*)::int FROM requeued) AS expired, ' +
      `${NOTIFY} AS notified FROM endpoint`
  }
} as const

/** The delivery log and the given-up deliveries in the shared store, on the database's pool. */
export class PostgresWebhookDeliveryLog implements WebhookDeliveryLog {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async listWebhookAttempts (endpointId: number, query: WebhookAttemptQuery): Promise<WebhookAttemptRecord[] | undefined> {
    const rows = await this.#database.query<{ found: boolean } & WebhookAttemptRow>(SQL.listAttempts,
      [endpointId, query.result ?? '', query.limit, query.beforeId ?? Number.MAX_SAFE_INTEGER])
    if (rows.length === 0) return undefined
    return rows.filter((row) => row.found).map(rowToWebhookAttempt)
  }

  async requeueGivenUpWebhookDeliveries (endpointId: number): Promise<RequeuedWebhookDeliveries | undefined> {
    const [row] = await this.#database.query<{ disabled: boolean, requeued: number, expired: number }>(SQL.requeueGivenUp, [endpointId])
    if (row === undefined) return undefined
    return { requeued: row.requeued, expired: row.expired, disabled: row.disabled }
  }

  async findWebhookTestTarget (endpointId: number, now: Date): Promise<WebhookTestTarget | undefined> {
    const [row] = await this.#database.query<WebhookTestTargetRow>(SQL.findEndpoint, [endpointId])
    return row === undefined ? undefined : rowToWebhookTestTarget(row, now)
  }

  async resendWebhookEvent (endpointId: number, eventId: number): Promise<ResentWebhookEvent> {
    return await this.#database.transaction(async (client): Promise<ResentWebhookEvent> => {
      const [endpoint] = (await client.query<ResendTargetRow>({ ...SQL.findResendTarget, values: [endpointId, eventId] })).rows
      if (endpoint === undefined) return { outcome: 'endpoint_not_found' }
      if (endpoint.disabled_at !== null) return { outcome: 'endpoint_disabled' }
      const type = endpoint.event_type
      if (type === null) return { outcome: 'event_not_found' }
      const received = splitEventTypes(endpoint.event_types)
      if (!received.includes(type)) return { outcome: 'type_not_received', type, received }
      // not scheduled yet: its turn comes anyway, and a delivery made now would be made again by the schedule
      if (eventId > endpoint.scheduled_through) return { outcome: 'waiting' }
      const [row] = (await client.query<{ attempt: number }>({ ...SQL.resendDelivery, values: [endpointId, eventId] })).rows
      return { outcome: 'queued', attempt: row?.attempt ?? 1 }
    })
  }

  async recoverWebhookDeliveries (endpointId: number, since: Date, until: Date): Promise<RecoveredWebhookDeliveries> {
    const [row] = await this.#database.query<{ disabled: boolean, queued: number, first: number | null, last: number | null }>(SQL.recover,
      [endpointId, since.getTime(), until.getTime()])
    if (row === undefined) return { outcome: 'endpoint_not_found' }
    if (row.disabled) return { outcome: 'endpoint_disabled' }
    return { outcome: 'queued', queued: row.queued, firstEventId: row.first, lastEventId: row.last }
  }
}

/** An endpoint's row and the type of the event to resend (null when no event has the id). */
interface ResendTargetRow { disabled_at: number | null, event_types: string, scheduled_through: number, event_type: EventType | null }
