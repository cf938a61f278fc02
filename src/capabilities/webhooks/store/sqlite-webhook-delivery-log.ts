import type Database from 'better-sqlite3'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import type { RequeuedWebhookDeliveries, WebhookAttemptQuery, WebhookAttemptRecord, WebhookDeliveryLog, WebhookTestTarget } from './webhook-delivery-log.js'
import {
  rowToWebhookAttempt, rowToWebhookTestTarget, WEBHOOK_ATTEMPT_COLUMNS, type WebhookAttemptRow, type WebhookTestTargetRow
} from './webhook-rows.js'

const SQL = {
  findEndpoint: 'SELECT url, secret, retired_secrets, disabled_at FROM webhook_endpoints WHERE id = ?',
  // newest first down the (endpoint_id, id) index; with ? = 1, only the failed ones
  listAttempts: `SELECT ${WEBHOOK_ATTEMPT_COLUMNS} FROM webhook_attempts a LEFT JOIN events e ON e.id = a.event_id ` +
    'WHERE a.endpoint_id = ? AND (? = 0 OR a.error IS NOT NULL) ORDER BY a.id DESC LIMIT ?',
  // due at once (0), whatever clock the dispatcher reads; the dispatcher takes due deliveries in event-id order
  requeueGivenUp: 'UPDATE webhook_deliveries SET failed_at = NULL, retried_attempts = retried_attempts + attempts, attempts = 0, next_attempt_at = 0 ' +
    'WHERE endpoint_id = ? AND failed_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.id = webhook_deliveries.event_id)',
  countGivenUp: 'SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND failed_at IS NOT NULL'
} as const

type Statements = PreparedStatements<keyof typeof SQL>

/** The delivery log and the given-up deliveries in the embedded store, on the database's SQLite connection. */
export class SqliteWebhookDeliveryLog implements WebhookDeliveryLog {
  readonly #database: SqliteDatabase
  readonly #db: Database.Database
  #prepared: Statements | undefined

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#db = database.connection
  }

  // prepared on first use, because preparing needs the tables that migrate() creates
  get #statements (): Statements {
    this.#prepared ??= this.#database.prepare(SQL, ['countGivenUp'])
    return this.#prepared
  }

  async listWebhookAttempts (endpointId: number, query: WebhookAttemptQuery): Promise<WebhookAttemptRecord[] | undefined> {
    // one read transaction: the endpoint and its attempts from one snapshot
    const list = this.#db.transaction((): WebhookAttemptRecord[] | undefined => {
      if (this.#statements.findEndpoint.get(endpointId) === undefined) return undefined
      return (this.#statements.listAttempts.all(endpointId, query.failedOnly ? 1 : 0, query.limit) as WebhookAttemptRow[]).map(rowToWebhookAttempt)
    })
    return this.#database.run(() => list.deferred())
  }

  async requeueGivenUpWebhookDeliveries (endpointId: number): Promise<RequeuedWebhookDeliveries | undefined> {
    const requeue = this.#db.transaction((): RequeuedWebhookDeliveries | undefined => {
      const statements = this.#statements
      const endpoint = statements.findEndpoint.get(endpointId) as WebhookTestTargetRow | undefined
      if (endpoint === undefined) return undefined
      const requeued = statements.requeueGivenUp.run(endpointId).changes
      return { requeued, expired: statements.countGivenUp.get(endpointId) as number, disabled: endpoint.disabled_at !== null }
    })
    const result = this.#database.run(() => requeue.immediate())
    // this process's dispatcher at once; others see the commit move PRAGMA data_version
    if (result !== undefined && result.requeued > 0) this.#database.eventsRecorded.raise()
    return result
  }

  async findWebhookTestTarget (endpointId: number, now: Date): Promise<WebhookTestTarget | undefined> {
    const row = this.#database.run(() => this.#statements.findEndpoint.get(endpointId) as WebhookTestTargetRow | undefined)
    return row === undefined ? undefined : rowToWebhookTestTarget(row, now)
  }
}
