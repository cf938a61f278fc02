import {
  CLAIMED_WEBHOOK_ENDPOINT_COLUMNS, DUE_WEBHOOK_DELIVERY_COLUMNS, rowToClaimedWebhookEndpoint, rowToDueWebhookDelivery,
  type ClaimedWebhookEndpointRow, type DueWebhookDeliveryRow
} from './webhook-rows.js'
import type { ClaimedWebhookEndpoint, DueWebhookDelivery, WebhookAttemptOutcome, WebhookDeliveryStore } from './webhook-store.js'
import type pg from 'pg'
import type { Statement } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'

// Each operation is one statement, so one transaction. Event ids are committed in id order (the changes
// lock, infra/database/postgres/postgres-outbox.ts): the newest id a statement sees has no smaller one still to commit,
// so a schedule cursor never skips an event
const SQL = {
  // a read, no lock: an idle instance looks for work without writing. The endpoint whose lease ended
  // longest ago goes first (never held: NULL sorts first; a release sets it to the time), so each endpoint
  // with work is served in turn. With $2 false, only endpoints not failing
  findClaimable: {
    name: 'petstore-find-claimable-webhook-endpoint',
    text: 'SELECT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.disabled_at IS NULL AND (w.lease_until IS NULL OR w.lease_until <= $1::bigint) ' +
      'AND ($2::boolean OR w.failing_since IS NULL) AND (' +
      'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.failed_at IS NULL AND d.next_attempt_at <= $1::bigint) ' +
      'OR EXISTS (SELECT 1 FROM events e WHERE e.id > w.scheduled_through))) AS found'
  },
  // SKIP LOCKED: instances claiming at once each take a different endpoint, none waits; the outer WHERE
  // checks the lease again on the row as locked
  claimEndpoint: {
    name: 'petstore-claim-webhook-endpoint',
    text: 'UPDATE webhook_endpoints SET lease_token = $3, lease_until = $1::bigint + $2::bigint WHERE id = (' +
      'SELECT w.id FROM webhook_endpoints w WHERE w.disabled_at IS NULL AND (w.lease_until IS NULL OR w.lease_until <= $1::bigint) ' +
      'AND ($4::boolean OR w.failing_since IS NULL) AND (' +
      'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.failed_at IS NULL AND d.next_attempt_at <= $1::bigint) ' +
      'OR EXISTS (SELECT 1 FROM events e WHERE e.id > w.scheduled_through)) ' +
      'ORDER BY w.lease_until NULLS FIRST, w.id LIMIT 1 FOR UPDATE SKIP LOCKED) ' +
      `AND (lease_until IS NULL OR lease_until <= $1::bigint) RETURNING ${CLAIMED_WEBHOOK_ENDPOINT_COLUMNS}`
  },
  // the endpoint row is locked first, so a claim taking the lease over waits for (or skips) this schedule.
  // New deliveries are due at once (0), whatever clock the caller's `now` comes from
  scheduleDeliveries: {
    name: 'petstore-schedule-webhook-deliveries',
    text: 'WITH endpoint AS (SELECT id, scheduled_through, string_to_array(event_types, \',\') AS types FROM webhook_endpoints ' +
      'WHERE id = $1 AND lease_token = $2 FOR UPDATE), ' +
      'batch AS (SELECT e.id, e.type FROM events e, endpoint WHERE e.id > endpoint.scheduled_through ORDER BY e.id LIMIT $3), ' +
      'created AS (INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts, next_attempt_at) ' +
      'SELECT endpoint.id, batch.id, 0, 0 FROM batch, endpoint WHERE batch.type = ANY (endpoint.types) ORDER BY batch.id ' +
      'ON CONFLICT (endpoint_id, event_id) DO NOTHING RETURNING 1), ' +
      'moved AS (UPDATE webhook_endpoints w SET scheduled_through = (SELECT max(id) FROM batch) FROM endpoint ' +
      'WHERE w.id = endpoint.id AND EXISTS (SELECT 1 FROM batch)) ' +
      'SELECT count(*)::int AS created FROM created'
  },
  nextDueDelivery: {
    name: 'petstore-next-due-webhook-delivery',
    // a disabled endpoint gets no more: its turn ends with the attempts in flight
    text: 'WITH endpoint AS (UPDATE webhook_endpoints SET lease_until = $3::bigint + $4::bigint WHERE id = $1 AND lease_token = $2 AND disabled_at IS NULL RETURNING id) ' +
      `SELECT ${DUE_WEBHOOK_DELIVERY_COLUMNS} FROM endpoint JOIN webhook_deliveries d ON d.endpoint_id = endpoint.id ` +
      'LEFT JOIN events e ON e.id = d.event_id WHERE d.failed_at IS NULL AND d.next_attempt_at <= $3::bigint ORDER BY d.event_id LIMIT $5'
  },
  // the delivery is touched only when the endpoint's update found the lease still held
  // the delivery log's row reads the delivery as it was before this statement (one snapshot): its attempts
  // before this one, those before `webhooks retry` included. $5 when the attempt was sent, $6 how long it took, $7 the status
  recordSuccess: {
    name: 'petstore-record-webhook-success',
    text: 'WITH endpoint AS (UPDATE webhook_endpoints SET last_success_at = $3, failing_since = NULL WHERE id = $1 AND lease_token = $2 RETURNING id), ' +
      'logged AS (INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms, status) ' +
      'SELECT d.endpoint_id, d.event_id, d.retried_attempts + d.attempts + 1, $5, $6, $7 FROM webhook_deliveries d, endpoint WHERE d.endpoint_id = endpoint.id AND d.event_id = $4) ' +
      'DELETE FROM webhook_deliveries d USING endpoint WHERE d.endpoint_id = endpoint.id AND d.event_id = $4'
  },
  // a batch of successes in one statement (one round trip, one commit), each logged as recordSuccess logs it:
  // $4 the event ids, $5 when each attempt was sent, $6 how long each took, $7 each status
  recordSuccesses: {
    name: 'petstore-record-webhook-successes',
    text: 'WITH endpoint AS (UPDATE webhook_endpoints SET last_success_at = $3, failing_since = NULL WHERE id = $1 AND lease_token = $2 RETURNING id), ' +
      'made AS (SELECT * FROM unnest($4::bigint[], $5::bigint[], $6::integer[], $7::integer[]) AS m (event_id, attempted_at, duration_ms, status)), ' +
      'logged AS (INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms, status) ' +
      'SELECT d.endpoint_id, d.event_id, d.retried_attempts + d.attempts + 1, m.attempted_at, m.duration_ms, m.status FROM webhook_deliveries d JOIN made m ON m.event_id = d.event_id, endpoint ' +
      'WHERE d.endpoint_id = endpoint.id ORDER BY d.event_id) ' +
      'DELETE FROM webhook_deliveries d USING endpoint WHERE d.endpoint_id = endpoint.id AND d.event_id = ANY ($4::bigint[])'
  },
  // $6 null: the schedule is exhausted, the delivery is given up; $8 when the attempt was sent, $9 how long it took, $10 the status
  recordFailure: {
    name: 'petstore-record-webhook-failure',
    text: 'WITH endpoint AS (UPDATE webhook_endpoints SET last_failure_at = $3::bigint, last_failure = $5, ' +
      'failing_since = coalesce(failing_since, $3::bigint), disabled_at = CASE WHEN $7::boolean THEN coalesce(disabled_at, $3::bigint) ELSE disabled_at END ' +
      'WHERE id = $1 AND lease_token = $2 RETURNING id), ' +
      'logged AS (INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, duration_ms, status, error, next_attempt_at) ' +
      'SELECT d.endpoint_id, d.event_id, d.retried_attempts + d.attempts + 1, $8, $9, $10, $5, $6 FROM webhook_deliveries d, endpoint WHERE d.endpoint_id = endpoint.id AND d.event_id = $4) ' +
      'UPDATE webhook_deliveries d SET attempts = d.attempts + 1, last_error = $5, next_attempt_at = coalesce($6::bigint, d.next_attempt_at), ' +
      'failed_at = CASE WHEN $6::bigint IS NULL THEN $3::bigint END FROM endpoint WHERE d.endpoint_id = endpoint.id AND d.event_id = $4'
  },
  // the lease ends at $3 (now, or when the receiver asked to be left alone until): it also orders the claims
  releaseEndpoint: { text: 'UPDATE webhook_endpoints SET lease_token = NULL, lease_until = $3 WHERE id = $1 AND lease_token = $2' },
  // events with a delivery still to make, and events no enabled endpoint has scheduled yet (of any type)
  oldestUndeliveredEventAt: {
    text: 'SELECT min(at) AS at FROM (' +
      'SELECT min(e.occurred_at) AS at FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id ' +
      'WHERE d.failed_at IS NULL AND w.disabled_at IS NULL ' +
      'UNION ALL SELECT min(occurred_at) FROM events WHERE id > (SELECT min(scheduled_through) FROM webhook_endpoints WHERE disabled_at IS NULL)) AS oldest'
  }
} as const

/** Runs one statement on the database's pool (errors already mapped to store errors). */
type RunQuery = <R extends pg.QueryResultRow>(statement: Statement, values: unknown[]) => Promise<R[]>

/** The webhook delivery queue in the shared store, on the database's pool. */
export class PostgresWebhookDeliveryStore implements WebhookDeliveryStore {
  readonly #query: RunQuery
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
    this.#query = async (statement, values) => await database.query(statement, values)
  }

  async claimWebhookEndpoint (now: Date, leaseMs: number, token: string, includeFailing: boolean): Promise<ClaimedWebhookEndpoint | undefined> {
    const found = await this.#query<{ found: boolean }>(SQL.findClaimable, [now.getTime(), includeFailing])
    if (found[0]?.found !== true) return undefined
    const rows = await this.#query<ClaimedWebhookEndpointRow>(SQL.claimEndpoint, [now.getTime(), leaseMs, token, includeFailing])
    return rows[0] === undefined ? undefined : rowToClaimedWebhookEndpoint(rows[0], now)
  }

  async scheduleWebhookDeliveries (claim: ClaimedWebhookEndpoint, limit: number): Promise<number> {
    const rows = await this.#query<{ created: number }>(SQL.scheduleDeliveries, [claim.id, claim.leaseToken, limit])
    return rows[0]?.created ?? 0
  }

  async nextDueWebhookDeliveries (claim: ClaimedWebhookEndpoint, now: Date, leaseMs: number, limit: number): Promise<DueWebhookDelivery[]> {
    const rows = await this.#query<DueWebhookDeliveryRow>(SQL.nextDueDelivery, [claim.id, claim.leaseToken, now.getTime(), leaseMs, limit])
    return rows.map(rowToDueWebhookDelivery)
  }

  async recordWebhookAttempts (claim: ClaimedWebhookEndpoint, attempts: ReadonlyArray<{ eventId: number, outcome: WebhookAttemptOutcome }>, now: Date): Promise<void> {
    if (attempts.length > 1 && attempts.every(({ outcome }) => outcome.delivered)) {
      await this.#query(SQL.recordSuccesses, [claim.id, claim.leaseToken, now.getTime(), attempts.map(({ eventId }) => eventId),
        attempts.map(({ outcome }) => outcome.startedAt.getTime()), attempts.map(({ outcome }) => Math.round(outcome.durationMs)), attempts.map(({ outcome }) => outcome.status ?? null)])
      return
    }
    // in the order given: a failure after a success leaves the endpoint failing, a success after a failure does not
    const values = attempts.map(({ eventId, outcome }): [Statement, unknown[]] => {
      const made = [outcome.startedAt.getTime(), outcome.durationMs, outcome.status ?? null]
      return outcome.delivered
        ? [SQL.recordSuccess, [claim.id, claim.leaseToken, now.getTime(), eventId, ...made]]
        : [SQL.recordFailure, [claim.id, claim.leaseToken, now.getTime(), eventId, outcome.error, outcome.retryAt?.getTime() ?? null, outcome.disable, ...made]]
    })
    const [only] = values
    if (values.length === 1 && only !== undefined) {
      await this.#query(only[0], only[1])
      return
    }
    // one transaction (one commit) for the attempts of a batch
    await this.#database.transaction(async (client) => {
      for (const [statement, params] of values) await client.query({ ...statement, values: params })
    })
  }

  async releaseWebhookEndpoint (claim: ClaimedWebhookEndpoint, until: Date): Promise<void> {
    await this.#query(SQL.releaseEndpoint, [claim.id, claim.leaseToken, until.getTime()])
  }

  async oldestUndeliveredEventAt (): Promise<Date | undefined> {
    const rows = await this.#query<{ at: Date | null }>(SQL.oldestUndeliveredEventAt, [])
    return rows[0]?.at ?? undefined
  }
}
