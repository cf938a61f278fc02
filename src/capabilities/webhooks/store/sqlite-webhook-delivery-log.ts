import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { EventType } from '../../events/index.js'
import type {
  RecoveredWebhookDeliveries, RequeuedWebhookDeliveries, ResentWebhookEvent, WebhookAttemptQuery, WebhookAttemptRecord, WebhookDeliveryLog, WebhookTestTarget
} from './webhook-delivery-log.js'
import {
  REQUEUE_DELIVERY, RESEND_DELIVERY_COLUMNS, rowToWebhookAttempt, rowToWebhookTestTarget, splitEventTypes, WEBHOOK_ATTEMPT_COLUMNS,
  type WebhookAttemptRow, type WebhookTestTargetRow
} from './webhook-rows.js'

// a delivery of the endpoint (@id) whose event is retained and had a failed attempt from @since to before @until
const RECOVERABLE = 'd.endpoint_id = @id AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) AND EXISTS (SELECT 1 FROM webhook_attempts a ' +
  'WHERE a.endpoint_id = @id AND a.event_id = d.event_id AND a.error IS NOT NULL AND a.attempted_at >= @since AND a.attempted_at < @until)'

const SQL = {
  findEndpoint: 'SELECT url, secret, retired_secrets, disabled_at, event_types, scheduled_through FROM webhook_endpoints WHERE id = ?',
  // newest first down the (endpoint_id, id) index, before @before; @result 'failed' or 'succeeded' keeps those only
  listAttempts: `SELECT ${WEBHOOK_ATTEMPT_COLUMNS} FROM webhook_attempts a LEFT JOIN events e ON e.id = a.event_id ` +
    "WHERE a.endpoint_id = @id AND a.id < @before AND (@result = '' OR (@result = 'failed') = (a.error IS NOT NULL)) ORDER BY a.id DESC LIMIT @limit",
  findEventType: 'SELECT type FROM events WHERE id = ?',
  // due at once, the whole schedule again; a delivery made before is one again, its attempts numbered on from the log's
  resendDelivery: `INSERT INTO webhook_deliveries (${RESEND_DELIVERY_COLUMNS}) VALUES (@id, @eventId, 0, 0, ` +
    '(SELECT coalesce(max(attempt), 0) FROM webhook_attempts WHERE endpoint_id = @id AND event_id = @eventId)) ' +
    `ON CONFLICT (endpoint_id, event_id) DO UPDATE SET ${REQUEUE_DELIVERY.replaceAll('retried_attempts + attempts', 'webhook_deliveries.retried_attempts + webhook_deliveries.attempts')} ` +
    'RETURNING retried_attempts + attempts + 1',
  countRecoverable: `SELECT count(*) AS queued, min(d.event_id) AS first, max(d.event_id) AS last FROM webhook_deliveries d WHERE ${RECOVERABLE}`,
  recover: `UPDATE webhook_deliveries AS d SET ${REQUEUE_DELIVERY} WHERE ${RECOVERABLE}`,
  // due at once (0), whatever clock the dispatcher reads; the dispatcher takes due deliveries in event-id order
  requeueGivenUp: `UPDATE webhook_deliveries SET ${REQUEUE_DELIVERY} ` +
    'WHERE endpoint_id = ? AND failed_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.id = webhook_deliveries.event_id)',
  countGivenUp: 'SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND failed_at IS NOT NULL'
} as const

type Statements = PreparedStatements<keyof typeof SQL>

/** The delivery log and the given-up deliveries in the embedded store, on the database's SQLite connection. */
export class SqliteWebhookDeliveryLog implements WebhookDeliveryLog {
  readonly #database: SqliteDatabase
  readonly #statements: () => Statements

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL, ['countGivenUp', 'findEventType', 'resendDelivery'])
  }

  async listWebhookAttempts (endpointId: number, query: WebhookAttemptQuery): Promise<WebhookAttemptRecord[] | undefined> {
    // one read transaction: the endpoint and its attempts from one snapshot
    const list = this.#database.connection.transaction((): WebhookAttemptRecord[] | undefined => {
      if (this.#statements().findEndpoint.get(endpointId) === undefined) return undefined
      const rows = this.#statements().listAttempts.all({ id: endpointId, before: query.beforeId ?? Number.MAX_SAFE_INTEGER, result: query.result ?? '', limit: query.limit })
      return (rows as WebhookAttemptRow[]).map(rowToWebhookAttempt)
    })
    return this.#database.run(() => list.deferred())
  }

  async requeueGivenUpWebhookDeliveries (endpointId: number): Promise<RequeuedWebhookDeliveries | undefined> {
    const requeue = this.#database.connection.transaction((): RequeuedWebhookDeliveries | undefined => {
      const statements = this.#statements()
      const endpoint = statements.findEndpoint.get(endpointId) as WebhookTestTargetRow | undefined
      if (endpoint === undefined) return undefined
      const requeued = statements.requeueGivenUp.run(endpointId).changes
      return { requeued, expired: statements.countGivenUp.get(endpointId) as number, disabled: endpoint.disabled_at !== null }
    })
    return this.#database.run(() => requeue.immediate())
  }

  async findWebhookTestTarget (endpointId: number, now: Date): Promise<WebhookTestTarget | undefined> {
    const row = this.#database.run(() => this.#statements().findEndpoint.get(endpointId) as WebhookTestTargetRow | undefined)
    return row === undefined ? undefined : rowToWebhookTestTarget(row, now)
  }

  async resendWebhookEvent (endpointId: number, eventId: number): Promise<ResentWebhookEvent> {
    const resend = this.#database.connection.transaction((): ResentWebhookEvent => {
      const statements = this.#statements()
      const endpoint = statements.findEndpoint.get(endpointId) as EndpointRow | undefined
      if (endpoint === undefined) return { outcome: 'endpoint_not_found' }
      if (endpoint.disabled_at !== null) return { outcome: 'endpoint_disabled' }
      const type = statements.findEventType.get(eventId) as EventType | undefined
      if (type === undefined) return { outcome: 'event_not_found' }
      const received = splitEventTypes(endpoint.event_types)
      if (!received.includes(type)) return { outcome: 'type_not_received', type, received }
      // not scheduled yet: its turn comes anyway, and a delivery made now would be made again by the schedule
      if (eventId > endpoint.scheduled_through) return { outcome: 'waiting' }
      return { outcome: 'queued', attempt: statements.resendDelivery.get({ id: endpointId, eventId }) as number }
    })
    return this.#database.run(() => resend.immediate())
  }

  async recoverWebhookDeliveries (endpointId: number, since: Date, until: Date): Promise<RecoveredWebhookDeliveries> {
    const window = { id: endpointId, since: since.getTime(), until: until.getTime() }
    // one transaction: what is counted is what is requeued, all of it or (after a crash) none
    const recover = this.#database.connection.transaction((): RecoveredWebhookDeliveries => {
      const endpoint = this.#statements().findEndpoint.get(endpointId) as EndpointRow | undefined
      if (endpoint === undefined) return { outcome: 'endpoint_not_found' }
      if (endpoint.disabled_at !== null) return { outcome: 'endpoint_disabled' }
      const { queued, first, last } = this.#statements().countRecoverable.get(window) as { queued: number, first: number | null, last: number | null }
      if (queued > 0) this.#statements().recover.run(window)
      return { outcome: 'queued', queued, firstEventId: first, lastEventId: last }
    })
    return this.#database.run(() => recover.immediate())
  }
}

/** An endpoint's row as a resend or a recovery reads it. */
type EndpointRow = WebhookTestTargetRow & { event_types: string, scheduled_through: number }
