import { EVENTS_RECORDED_CHANNEL } from '../../../infra/database/commit-signal.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import type { RequeuedWebhookDeliveries, WebhookAttemptQuery, WebhookAttemptRecord, WebhookDeliveryLog, WebhookTestTarget } from './webhook-delivery-log.js'
import {
  rowToWebhookAttempt, rowToWebhookTestTarget, WEBHOOK_ATTEMPT_COLUMNS, type WebhookAttemptRow, type WebhookTestTargetRow
} from './webhook-rows.js'

// Each operation is one statement, so one snapshot
const SQL = {
  findEndpoint: { text: 'SELECT url, secret, retired_secrets, disabled_at FROM webhook_endpoints WHERE id = $1' },
  // one row per attempt, newest first down the (endpoint_id, id) index, with the endpoint's row: an endpoint
  // without attempts is one row of nulls, an unknown id none. With $2, only the failed attempts
  listAttempts: {
    text: `SELECT a.id AS attempt_id, ${WEBHOOK_ATTEMPT_COLUMNS} FROM webhook_endpoints w LEFT JOIN LATERAL (` +
      'SELECT * FROM webhook_attempts a WHERE a.endpoint_id = w.id AND (NOT $2::boolean OR a.error IS NOT NULL) ORDER BY a.id DESC LIMIT $3' +
      ') a ON true LEFT JOIN events e ON e.id = a.event_id WHERE w.id = $1 ORDER BY a.id DESC'
  },
  // due at once (0), whatever clock the dispatcher reads; the dispatcher takes due deliveries in event-id
  // order. The count of given-up deliveries reads the snapshot from before the update: those requeued are in
  // it. The notification wakes every instance's dispatcher at commit
  requeueGivenUp: {
    text: 'WITH endpoint AS (SELECT id, disabled_at FROM webhook_endpoints WHERE id = $1), ' +
      'requeued AS (UPDATE webhook_deliveries d SET failed_at = NULL, retried_attempts = retried_attempts + attempts, attempts = 0, next_attempt_at = 0 FROM endpoint ' +
      'WHERE d.endpoint_id = endpoint.id AND d.failed_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) RETURNING 1) ' +
      'SELECT (SELECT disabled_at IS NOT NULL FROM endpoint) AS disabled, (SELECT count(*)::int FROM requeued) AS requeued, ' +
      '(SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.failed_at IS NOT NULL) - (SELECT count(*)::int FROM requeued) AS expired, ' +
      `pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema()) AS notified FROM endpoint`
  }
} as const

/** The delivery log and the given-up deliveries in the shared store, on the database's pool. */
export class PostgresWebhookDeliveryLog implements WebhookDeliveryLog {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async listWebhookAttempts (endpointId: number, query: WebhookAttemptQuery): Promise<WebhookAttemptRecord[] | undefined> {
    const rows = await this.#database.query<{ attempt_id: number | null } & WebhookAttemptRow>(SQL.listAttempts, [endpointId, query.failedOnly, query.limit])
    if (rows.length === 0) return undefined
    return rows.filter((row) => row.attempt_id !== null).map(rowToWebhookAttempt)
  }

  async requeueGivenUpWebhookDeliveries (endpointId: number): Promise<RequeuedWebhookDeliveries | undefined> {
    const [row] = await this.#database.query<{ disabled: boolean, requeued: number, expired: number }>(SQL.requeueGivenUp, [endpointId])
    if (row === undefined) return undefined
    // this process's dispatcher at once (its own notifications reach it too, a little later)
    if (row.requeued > 0) this.#database.eventsRecorded.raise()
    return { requeued: row.requeued, expired: row.expired, disabled: row.disabled }
  }

  async findWebhookTestTarget (endpointId: number, now: Date): Promise<WebhookTestTarget | undefined> {
    const [row] = await this.#database.query<WebhookTestTargetRow>(SQL.findEndpoint, [endpointId])
    return row === undefined ? undefined : rowToWebhookTestTarget(row, now)
  }
}
