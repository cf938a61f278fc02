import {
  CLAIMED_WEBHOOK_ENDPOINT_COLUMNS, DUE_WEBHOOK_DELIVERY_COLUMNS, joinEventTypes, NEW_WEBHOOK_ENDPOINT_COLUMNS, rowToClaimedWebhookEndpoint,
  rowToDueWebhookDelivery, rowToWebhookEndpoint, WEBHOOK_ENDPOINT_COLUMNS,
  type ClaimedWebhookEndpointRow, type DueWebhookDeliveryRow, type WebhookEndpointRow
} from './webhook-rows.js'
import type {
  ChangedWebhookEndpoint, ClaimedWebhookEndpoint, DueWebhookDelivery, NewWebhookEndpoint, WebhookAttemptOutcome, WebhookEndpointChange,
  WebhookEndpointRecord, WebhookStore
} from './webhook-store.js'
import { EVENTS_RECORDED_CHANNEL } from '../../../infra/database/commit-signal.js'
import type pg from 'pg'
import type { Statement } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'

// Each operation is one statement, so one transaction. Event ids are committed in id order (the changes
// lock, src/store/postgres/sql.ts): the newest id a statement sees has no smaller one still to commit,
// so a schedule cursor never skips an event
const SQL = {
  insertEndpoint: {
    text: 'INSERT INTO webhook_endpoints (name, url, event_types, secret, created_at, scheduled_through) ' +
      `SELECT $1, $2, $3, $4, $5, coalesce(max(id), 0) FROM events RETURNING ${NEW_WEBHOOK_ENDPOINT_COLUMNS}`
  },
  listEndpoints: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w ORDER BY w.id` },
  // the deliveries go with it (ON DELETE CASCADE)
  deleteEndpoint: { text: 'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id' },
  rotateSecret: {
    // the current secret joins the retired ones still open at $4; the expired ones are pruned
    text: 'UPDATE webhook_endpoints SET retired_secrets = (SELECT coalesce(json_agg(s), \'[]\')::text FROM (' +
      'SELECT s FROM json_array_elements(retired_secrets::json) s WHERE (s->>\'until\')::bigint > $4::bigint ' +
      'UNION ALL SELECT json_build_object(\'secret\', secret, \'until\', $2::bigint)) retired), secret = $3 WHERE id = $1 RETURNING id'
  },
  // the row locked first: a dispatcher's schedule of this endpoint waits for the change, then reads it
  findEndpointLocked: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = $1 FOR UPDATE OF w` },
  findEndpoint: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = $1` },
  renameEndpoint: { text: 'UPDATE webhook_endpoints SET name = $2 WHERE id = $1' },
  // one statement, one snapshot: the events not yet scheduled are scheduled for the types wanted before and after
  // ($2), the cursor moves past the newest of them (a type newly wanted applies to the events recorded from now
  // on, as for `add`), and the deliveries of a type no longer wanted ($3 the types wanted now) are dropped,
  // waiting and given up alike (a delivery whose event retention deleted has no type left to judge by)
  changeEventTypes: {
    text: 'WITH pending AS (SELECT e.id, e.type FROM events e, webhook_endpoints w WHERE w.id = $1 AND e.id > w.scheduled_through), ' +
      'created AS (INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts, next_attempt_at) ' +
      'SELECT $1, pending.id, 0, 0 FROM pending WHERE pending.type = ANY ($2::text[]) ON CONFLICT (endpoint_id, event_id) DO NOTHING), ' +
      'dropped AS (DELETE FROM webhook_deliveries d USING events e WHERE d.endpoint_id = $1 AND e.id = d.event_id AND NOT (e.type = ANY ($3::text[]))) ' +
      'UPDATE webhook_endpoints SET event_types = $4, scheduled_through = greatest(scheduled_through, coalesce((SELECT max(id) FROM pending), 0)) WHERE id = $1'
  },
  disableEndpoint: { text: 'UPDATE webhook_endpoints SET disabled_at = $2 WHERE id = $1 AND disabled_at IS NULL' },
  // its waiting deliveries due at once (0), whatever clock the dispatcher reads: before the events recorded while
  // it was disabled, in id order. The notification wakes every instance's dispatcher at commit
  enableEndpoint: {
    text: 'WITH enabled AS (UPDATE webhook_endpoints SET disabled_at = NULL, failing_since = NULL WHERE id = $1 AND disabled_at IS NOT NULL RETURNING id), ' +
      'resumed AS (UPDATE webhook_deliveries d SET next_attempt_at = 0 FROM enabled WHERE d.endpoint_id = enabled.id AND d.failed_at IS NULL) ' +
      `SELECT pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema()) FROM enabled`
  },
  hasEnabledEndpoints: { text: 'SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL) AS enabled' },
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

/** The webhook endpoints and their queue in the shared store, on the database's pool. */
/** Runs one statement on the database's pool (errors already mapped to store errors). */
type RunQuery = <R extends pg.QueryResultRow>(statement: Statement, values: unknown[]) => Promise<R[]>

export class PostgresWebhookStore implements WebhookStore {
  readonly #query: RunQuery
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
    this.#query = async (statement, values) => await database.query(statement, values)
  }

  async createWebhookEndpoint (endpoint: NewWebhookEndpoint, now: Date): Promise<WebhookEndpointRecord> {
    const rows = await this.#query<WebhookEndpointRow>(SQL.insertEndpoint,
      [endpoint.name, endpoint.url, joinEventTypes(endpoint.eventTypes), endpoint.secret, now.getTime()])
    const row = rows[0]
    if (row === undefined) throw new Error('the insert returned no row')
    return rowToWebhookEndpoint(row)
  }

  async listWebhookEndpoints (): Promise<WebhookEndpointRecord[]> {
    return (await this.#query<WebhookEndpointRow>(SQL.listEndpoints, [])).map(rowToWebhookEndpoint)
  }

  async removeWebhookEndpoint (id: number): Promise<boolean> {
    return (await this.#query(SQL.deleteEndpoint, [id])).length === 1
  }

  async rotateWebhookSecret (id: number, secret: string, previousUntil: Date, now: Date): Promise<boolean> {
    return (await this.#query(SQL.rotateSecret, [id, previousUntil.getTime(), secret, now.getTime()])).length === 1
  }

  async updateWebhookEndpoint (id: number, change: WebhookEndpointChange, now: Date): Promise<ChangedWebhookEndpoint | undefined> {
    const run = async (client: pg.PoolClient, statement: Statement, values: unknown[]): Promise<WebhookEndpointRow[]> =>
      (await client.query<WebhookEndpointRow>({ ...statement, values })).rows
    const changed = await this.#database.transaction(async (client): Promise<ChangedWebhookEndpoint | undefined> => {
      const [found] = await run(client, SQL.findEndpointLocked, [id])
      if (found === undefined) return undefined
      const before = rowToWebhookEndpoint(found)
      if (change.name !== undefined && change.name !== before.name) await run(client, SQL.renameEndpoint, [id, change.name])
      const types = change.eventTypes
      if (types !== undefined && joinEventTypes(types) !== joinEventTypes(before.eventTypes)) {
        await run(client, SQL.changeEventTypes, [id, before.eventTypes.filter((type) => types.includes(type)), types, joinEventTypes(types)])
      }
      if (change.enabled === false) await run(client, SQL.disableEndpoint, [id, now.getTime()])
      if (change.enabled === true) await run(client, SQL.enableEndpoint, [id])
      const [after] = await run(client, SQL.findEndpoint, [id])
      if (after === undefined) throw new Error('the endpoint changed is gone')
      return { before, after: rowToWebhookEndpoint(after) }
    })
    // this process's dispatcher at once (its own notification reaches it too, a little later)
    if (change.enabled === true && changed !== undefined && changed.before.disabledAt !== null) this.#database.eventsRecorded.raise()
    return changed
  }

  async hasEnabledWebhookEndpoints (): Promise<boolean> {
    return (await this.#query<{ enabled: boolean }>(SQL.hasEnabledEndpoints, []))[0]?.enabled === true
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
