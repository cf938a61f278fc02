import type pg from 'pg'
import type { Statement } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { NOTIFY_DELIVERIES_DUE } from './deliveries-due.js'
import { joinEventTypes, NEW_WEBHOOK_ENDPOINT_COLUMNS, rowToWebhookEndpoint, webhookEndpointColumns, type WebhookEndpointRow } from './webhook-rows.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError } from '../../idempotency/index.js'
import {
  WebhookEndpointLimitError, type NewWebhookEndpoint, type NewWebhookEndpointOptions, type WebhookEndpointChange, type WebhookEndpointPage, type WebhookEndpointRecord,
  type WebhookEndpointStore, type WebhookEndpointUpdate
} from './webhook-store.js'

const WEBHOOK_ENDPOINT_COLUMNS = webhookEndpointColumns("e.type = ANY (string_to_array(w.event_types, ','))")

// Event ids are committed in id order (the changes lock): the newest id a statement sees has no smaller one
// still to commit, so a schedule cursor never skips an event
const SQL = {
  // creates wait for each other (and the dispatchers' writes for them, a moment): a count and its insert are never overtaken
  lockEndpoints: { text: 'LOCK TABLE webhook_endpoints IN SHARE ROW EXCLUSIVE MODE' },
  countEndpoints: { text: 'SELECT count(*)::int AS count FROM webhook_endpoints' },
  insertEndpoint: {
    text: 'INSERT INTO webhook_endpoints (name, url, event_types, secret, description, rate_limit, signing, public_key, created_at, disabled_at, scheduled_through) ' +
      `SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce(max(id), 0) FROM events RETURNING ${NEW_WEBHOOK_ENDPOINT_COLUMNS}`
  },
  listEndpoints: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id > $1 ORDER BY w.id LIMIT $2` },
  // the deliveries and attempts go with it (ON DELETE CASCADE)
  deleteEndpoint: { text: 'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id' },
  rotateSecret: {
    // the current secret joins the retired ones still open at $4; the expired ones are pruned
    text: 'UPDATE webhook_endpoints SET retired_secrets = (SELECT coalesce(json_agg(s), \'[]\')::text FROM (' +
      'SELECT s FROM json_array_elements(retired_secrets::json) s WHERE (s->>\'until\')::bigint > $4::bigint ' +
      'UNION ALL SELECT json_build_object(\'secret\', secret, \'until\', $2::bigint)) retired), secret = $3, public_key = $5 WHERE id = $1 RETURNING id'
  },
  // the row locked first: a dispatcher's schedule of this endpoint waits for the change, then reads it
  findEndpointLocked: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = $1 FOR UPDATE OF w` },
  findEndpoint: { text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = $1` },
  // what a change sets beside the event types and the state, each only when given: the others keep their value
  changeSettings: {
    text: 'UPDATE webhook_endpoints SET name = coalesce($2, name), url = coalesce($3, url), description = CASE WHEN $4::boolean THEN $5 ELSE description END, ' +
      'rate_limit = CASE WHEN $6::boolean THEN $7::integer ELSE rate_limit END WHERE id = $1'
  },
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
      `SELECT ${NOTIFY_DELIVERIES_DUE} FROM enabled`
  },
  hasEnabledEndpoints: { text: 'SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL) AS enabled' }
} as const

/** The webhook endpoints in the shared store, on the database's pool. */
export class PostgresWebhookEndpointStore implements WebhookEndpointStore {
  readonly #database: PostgresDatabase

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async createWebhookEndpoint (endpoint: NewWebhookEndpoint, now: Date, { maxEndpoints, completing }: NewWebhookEndpointOptions = {}): Promise<WebhookEndpointRecord> {
    const values = [endpoint.name, endpoint.url, joinEventTypes(endpoint.eventTypes), endpoint.secret, endpoint.description ?? null, endpoint.rateLimit ?? null,
      endpoint.signing ?? 'hmac-sha256', endpoint.publicKey ?? null, now.getTime(), endpoint.disabled === true ? now.getTime() : null]
    if (maxEndpoints === undefined && completing === undefined) {
      const [row] = await this.#database.query<WebhookEndpointRow>(SQL.insertEndpoint, values)
      if (row === undefined) throw new Error('the insert returned no row')
      return rowToWebhookEndpoint(row)
    }
    // a refusal rolls the transaction back (its lock, the insert) rather than throwing through it
    const created = await this.#database.transaction(async (client): Promise<WebhookEndpointRecord | Error> => {
      if (maxEndpoints !== undefined) {
        await client.query(SQL.lockEndpoints)
        const [counted] = (await client.query<{ count: number }>(SQL.countEndpoints)).rows
        if ((counted?.count ?? 0) >= maxEndpoints) return new WebhookEndpointLimitError(maxEndpoints)
      }
      const [row] = (await client.query<WebhookEndpointRow>({ ...SQL.insertEndpoint, values })).rows
      if (row === undefined) throw new Error('the insert returned no row')
      const record = rowToWebhookEndpoint(row)
      if (completing !== undefined) {
        const { scope, key, token } = completing.claim
        const completed = await client.query({ ...COMPLETE_CLAIM_SQL.postgres, values: [[scope], [key], [token], [completing.answer(record)]] })
        if (completed.rows.length !== 1) return new IdempotencyClaimLostError()
      }
      return record
    }, (outcome) => outcome instanceof Error)
    if (created instanceof Error) throw created
    return created
  }

  async findWebhookEndpoint (id: number): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.#database.query<WebhookEndpointRow>(SQL.findEndpoint, [id])
    return row === undefined ? undefined : rowToWebhookEndpoint(row)
  }

  async listWebhookEndpoints (page?: WebhookEndpointPage): Promise<WebhookEndpointRecord[]> {
    // one statement, one snapshot: the endpoints and their counts; LIMIT NULL is no limit
    return (await this.#database.query<WebhookEndpointRow>(SQL.listEndpoints, [page?.afterId ?? 0, page?.limit ?? null])).map(rowToWebhookEndpoint)
  }

  async removeWebhookEndpoint (id: number): Promise<boolean> {
    return (await this.#database.query(SQL.deleteEndpoint, [id])).length === 1
  }

  async rotateWebhookSecret (id: number, secret: string, previousUntil: Date, now: Date, publicKey?: string): Promise<boolean> {
    return (await this.#database.query(SQL.rotateSecret, [id, previousUntil.getTime(), secret, now.getTime(), publicKey ?? null])).length === 1
  }

  async updateWebhookEndpoint (id: number, change: WebhookEndpointChange, now: Date, precondition?: (current: WebhookEndpointRecord) => boolean): Promise<WebhookEndpointUpdate> {
    const run = async (client: pg.PoolClient, statement: Statement, values: unknown[]): Promise<WebhookEndpointRow[]> =>
      (await client.query<WebhookEndpointRow>({ ...statement, values })).rows
    return await this.#database.transaction(async (client): Promise<WebhookEndpointUpdate> => {
      const [found] = await run(client, SQL.findEndpointLocked, [id])
      if (found === undefined) return { outcome: 'not_found' }
      const before = rowToWebhookEndpoint(found)
      if (precondition !== undefined && !precondition(before)) return { outcome: 'precondition_failed', current: before }
      if (change.name !== undefined || change.url !== undefined || change.description !== undefined || change.rateLimit !== undefined) {
        await run(client, SQL.changeSettings, [id, change.name ?? null, change.url ?? null, change.description !== undefined, change.description ?? null,
          change.rateLimit !== undefined, change.rateLimit ?? null])
      }
      const types = change.eventTypes
      if (types !== undefined && joinEventTypes(types) !== joinEventTypes(before.eventTypes)) {
        await run(client, SQL.changeEventTypes, [id, before.eventTypes.filter((type) => types.includes(type)), types, joinEventTypes(types)])
      }
      if (change.enabled === false) await run(client, SQL.disableEndpoint, [id, now.getTime()])
      if (change.enabled === true) await run(client, SQL.enableEndpoint, [id])
      const [after] = await run(client, SQL.findEndpoint, [id])
      if (after === undefined) throw new Error('the endpoint changed is gone')
      return { outcome: 'changed', before, after: rowToWebhookEndpoint(after) }
    })
  }

  async hasEnabledWebhookEndpoints (): Promise<boolean> {
    return (await this.#database.query<{ enabled: boolean }>(SQL.hasEnabledEndpoints, []))[0]?.enabled === true
  }
}
