import type { EventType } from '../../events/index.js'
import {
  CLAIMED_WEBHOOK_ENDPOINT_COLUMNS, DUE_WEBHOOK_DELIVERY_COLUMNS, rowToClaimedWebhookEndpoint, rowToDueWebhookDelivery, splitEventTypes,
  type ClaimedWebhookEndpointRow, type DueWebhookDeliveryRow
} from './webhook-rows.js'
import type { ClaimedWebhookEndpoint, DueWebhookDelivery, WebhookAttemptOutcome, WebhookDeliveryStore } from './webhook-store.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'

const SQL = {
  // a read, no lock: an idle instance looks for work without writing. The endpoint whose lease ended
  // longest ago goes first (never held: NULL sorts first; a release sets it to the time), so each endpoint
  // with work is served in turn. With ? = 0, only endpoints not failing
  findClaimable: 'SELECT w.id FROM webhook_endpoints w WHERE w.disabled_at IS NULL AND (w.lease_until IS NULL OR w.lease_until <= ?) ' +
    'AND (? OR w.failing_since IS NULL) AND (' +
    'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.failed_at IS NULL AND d.next_attempt_at <= ?) ' +
    'OR EXISTS (SELECT 1 FROM events e WHERE e.id > w.scheduled_through)) ' +
    'ORDER BY w.lease_until NULLS FIRST, w.id LIMIT 1',
  // one statement under SQLite's write lock, the lease checked again: two instances never take one endpoint
  claimEndpoint: 'UPDATE webhook_endpoints SET lease_token = ?, lease_until = ? WHERE id = ? AND disabled_at IS NULL ' +
    `AND (lease_until IS NULL OR lease_until <= ?) RETURNING ${CLAIMED_WEBHOOK_ENDPOINT_COLUMNS}`,
  findLeasedEndpoint: 'SELECT scheduled_through, event_types FROM webhook_endpoints WHERE id = ? AND lease_token = ?',
  eventsAfter: 'SELECT id, type FROM events WHERE id > ? ORDER BY id LIMIT ?',
  // due at once (0), whatever clock the caller's `now` comes from
  insertDelivery: 'INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts, next_attempt_at) VALUES (?, ?, 0, 0) ' +
    'ON CONFLICT (endpoint_id, event_id) DO NOTHING',
  markScheduled: 'UPDATE webhook_endpoints SET scheduled_through = ? WHERE id = ?',
  // a disabled endpoint gets no more: its turn ends with the attempts in flight
  renewLease: 'UPDATE webhook_endpoints SET lease_until = ? WHERE id = ? AND lease_token = ? AND disabled_at IS NULL',
  nextDueDelivery: `SELECT ${DUE_WEBHOOK_DELIVERY_COLUMNS} FROM webhook_deliveries d LEFT JOIN events e ON e.id = d.event_id ` +
    'WHERE d.endpoint_id = ? AND d.failed_at IS NULL AND d.next_attempt_at <= ? ORDER BY d.event_id LIMIT ?',
  // before the delivery's own update: the attempt's number is one more than those it counts, before `webhooks retry` too
  logAttempt: 'INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms, status, error, next_attempt_at) ' +
    'SELECT endpoint_id, event_id, retried_attempts + attempts + 1, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?',
  recordSuccess: 'UPDATE webhook_endpoints SET last_success_at = ?, failing_since = NULL WHERE id = ? AND lease_token = ?',
  deleteDelivery: 'DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?',
  recordFailure: 'UPDATE webhook_endpoints SET last_failure_at = ?, last_failure = ?, failing_since = coalesce(failing_since, ?), ' +
    'disabled_at = CASE WHEN ? THEN coalesce(disabled_at, ?) ELSE disabled_at END WHERE id = ? AND lease_token = ?',
  retryDelivery: 'UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE endpoint_id = ? AND event_id = ?',
  giveUpDelivery: 'UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = ?, failed_at = ? WHERE endpoint_id = ? AND event_id = ?',
  // the lease ends at ? (now, or when the receiver asked to be left alone until): it also orders the claims
  releaseEndpoint: 'UPDATE webhook_endpoints SET lease_token = NULL, lease_until = ? WHERE id = ? AND lease_token = ?',
  // events with a delivery still to make, and events no enabled endpoint has scheduled yet (of any type)
  oldestUndeliveredEventAt: 'SELECT min(at) FROM (' +
    'SELECT min(e.occurred_at) AS at FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id ' +
    'WHERE d.failed_at IS NULL AND w.disabled_at IS NULL ' +
    'UNION ALL SELECT min(occurred_at) FROM events WHERE id > (SELECT min(scheduled_through) FROM webhook_endpoints WHERE disabled_at IS NULL))'
} as const

type Statements = PreparedStatements<keyof typeof SQL>

/** The webhook delivery queue in the embedded store, on the database's SQLite connection. */
export class SqliteWebhookDeliveryStore implements WebhookDeliveryStore {
  readonly #database: SqliteDatabase
  readonly #statements: () => Statements

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL, ['oldestUndeliveredEventAt', 'findClaimable'])
  }

  async claimWebhookEndpoint (now: Date, leaseMs: number, token: string, includeFailing: boolean): Promise<ClaimedWebhookEndpoint | undefined> {
    const ms = now.getTime()
    return this.#runQueue(() => {
      const id = this.#statements().findClaimable.get(ms, includeFailing ? 1 : 0, ms) as number | undefined
      if (id === undefined) return undefined
      const row = this.#statements().claimEndpoint.get(token, ms + leaseMs, id, ms) as ClaimedWebhookEndpointRow | undefined
      return row === undefined ? undefined : rowToClaimedWebhookEndpoint(row, now)
    })
  }

  async scheduleWebhookDeliveries (claim: ClaimedWebhookEndpoint, limit: number): Promise<number> {
    const schedule = this.#database.connection.transaction((): number => {
      const statements = this.#statements()
      const endpoint = statements.findLeasedEndpoint.get(claim.id, claim.leaseToken) as { scheduled_through: number, event_types: string } | undefined
      if (endpoint === undefined) return 0
      const wanted = new Set(splitEventTypes(endpoint.event_types))
      const events = statements.eventsAfter.all(endpoint.scheduled_through, limit) as Array<{ id: number, type: EventType }>
      let created = 0
      for (const event of events) {
        if (wanted.has(event.type)) created += statements.insertDelivery.run(claim.id, event.id).changes
      }
      const last = events.at(-1)
      if (last !== undefined) statements.markScheduled.run(last.id, claim.id)
      return created
    })
    return this.#runQueue(() => schedule.immediate())
  }

  async nextDueWebhookDeliveries (claim: ClaimedWebhookEndpoint, now: Date, leaseMs: number, limit: number): Promise<DueWebhookDelivery[]> {
    const next = this.#database.connection.transaction((): DueWebhookDelivery[] => {
      const statements = this.#statements()
      if (statements.renewLease.run(now.getTime() + leaseMs, claim.id, claim.leaseToken).changes !== 1) return []
      return (statements.nextDueDelivery.all(claim.id, now.getTime(), limit) as DueWebhookDeliveryRow[]).map(rowToDueWebhookDelivery)
    })
    return this.#runQueue(() => next.immediate())
  }

  async recordWebhookAttempts (claim: ClaimedWebhookEndpoint, attempts: ReadonlyArray<{ eventId: number, outcome: WebhookAttemptOutcome }>, now: Date): Promise<void> {
    const ms = now.getTime()
    // one transaction (one fsync) for the attempts of a batch
    const record = this.#database.connection.transaction((): void => {
      const statements = this.#statements()
      for (const { eventId, outcome } of attempts) {
        const log = (error: string | null, nextAttemptAt: number | null): void => {
          statements.logAttempt.run(outcome.startedAt.getTime(), outcome.durationMs, outcome.status ?? null, error, nextAttemptAt, claim.id, eventId)
        }
        if (outcome.delivered) {
          // the endpoint's update checks the lease first: a lease taken over is not written through
          if (statements.recordSuccess.run(ms, claim.id, claim.leaseToken).changes !== 1) continue
          log(null, null)
          statements.deleteDelivery.run(claim.id, eventId)
          continue
        }
        if (statements.recordFailure.run(ms, outcome.error, ms, outcome.disable ? 1 : 0, ms, claim.id, claim.leaseToken).changes !== 1) continue
        log(outcome.error, outcome.retryAt?.getTime() ?? null)
        if (outcome.retryAt === undefined) statements.giveUpDelivery.run(outcome.error, ms, claim.id, eventId)
        else statements.retryDelivery.run(outcome.error, outcome.retryAt.getTime(), claim.id, eventId)
      }
    })
    this.#runQueue(() => record.immediate())
  }

  async releaseWebhookEndpoint (claim: ClaimedWebhookEndpoint, until: Date): Promise<void> {
    this.#runQueue(() => this.#statements().releaseEndpoint.run(until.getTime(), claim.id, claim.leaseToken))
  }

  async oldestUndeliveredEventAt (): Promise<Date | undefined> {
    return this.#run(() => {
      const ms = this.#statements().oldestUndeliveredEventAt.get() as number | null
      return ms === null ? undefined : new Date(ms)
    })
  }

  #run<T>(operation: () => T): T {
    return this.#database.run(operation)
  }

  // the queue's leases, schedules and outcomes: redone when lost (a lease is taken again, a delivery sent
  // again), so their commits do not wait for the disk, which would stall the event loop for each of them
  #runQueue<T>(operation: () => T): T {
    return this.#database.runWithoutFsync(operation)
  }
}
