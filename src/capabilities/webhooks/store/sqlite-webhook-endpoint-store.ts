import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { joinEventTypes, NEW_WEBHOOK_ENDPOINT_COLUMNS, rowToWebhookEndpoint, webhookEndpointColumns, type WebhookEndpointRow } from './webhook-rows.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError } from '../../idempotency/index.js'
import {
  WebhookEndpointLimitError, type NewWebhookEndpoint, type NewWebhookEndpointOptions, type WebhookEndpointChange, type WebhookEndpointPage, type WebhookEndpointRecord,
  type WebhookEndpointStore, type WebhookEndpointUpdate
} from './webhook-store.js'

// the endpoint's types are comma-separated: the event's type, between commas, is among them
const WEBHOOK_ENDPOINT_COLUMNS = webhookEndpointColumns("instr(',' || w.event_types || ',', ',' || e.type || ',') > 0")

const SQL = {
  countEndpoints: 'SELECT count(*) FROM webhook_endpoints',
  completeIdempotencyKey: COMPLETE_CLAIM_SQL.sqlite,
  // one statement: the newest event id is read under the write lock that the insert holds
  insertEndpoint: 'INSERT INTO webhook_endpoints (name, url, event_types, secret, description, rate_limit, signing, public_key, created_at, disabled_at, scheduled_through) ' +
    `VALUES (@name, @url, @eventTypes, @secret, @description, @rateLimit, @signing, @publicKey, @now, @disabledAt, (SELECT coalesce(max(id), 0) FROM events)) RETURNING ${NEW_WEBHOOK_ENDPOINT_COLUMNS}`,
  listEndpoints: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id > ? ORDER BY w.id LIMIT ?`,
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = ?',
  // the current secret joins the retired ones still open at `now`; the expired ones are pruned
  rotateSecret: 'UPDATE webhook_endpoints SET retired_secrets = (SELECT json_group_array(json(value)) FROM (' +
    "SELECT value FROM json_each(webhook_endpoints.retired_secrets) WHERE json_extract(value, '$.until') > @now " +
    "UNION ALL SELECT json_object('secret', webhook_endpoints.secret, 'until', @until))), secret = @secret, public_key = @publicKey WHERE id = @id",
  findEndpoint: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = ?`,
  // what a change sets beside the event types and the state, each only when given (? = 1): the others keep their value
  changeSettings: 'UPDATE webhook_endpoints SET name = coalesce(@name, name), url = coalesce(@url, url), ' +
    'description = CASE WHEN @setDescription THEN @description ELSE description END, rate_limit = CASE WHEN @setRateLimit THEN @rateLimit ELSE rate_limit END WHERE id = @id',
  // the events not yet scheduled are scheduled now for the types wanted before and after (json ?), then the
  // cursor moves past them: a type newly wanted applies to the events recorded from now on, as for `add`
  scheduleKeptTypes: 'INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts, next_attempt_at) ' +
    'SELECT w.id, e.id, 0, 0 FROM webhook_endpoints w JOIN events e ON e.id > w.scheduled_through ' +
    'WHERE w.id = ? AND e.type IN (SELECT value FROM json_each(?)) ON CONFLICT (endpoint_id, event_id) DO NOTHING',
  setEventTypes: 'UPDATE webhook_endpoints SET event_types = ?, scheduled_through = max(scheduled_through, (SELECT coalesce(max(id), 0) FROM events)) WHERE id = ?',
  // waiting and given up alike; a delivery whose event retention deleted has no type left to judge by
  dropUnwanted: 'DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND EXISTS (SELECT 1 FROM events e ' +
    'WHERE e.id = webhook_deliveries.event_id AND e.type NOT IN (SELECT value FROM json_each(?)))',
  disableEndpoint: 'UPDATE webhook_endpoints SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL',
  enableEndpoint: 'UPDATE webhook_endpoints SET disabled_at = NULL, failing_since = NULL WHERE id = ? AND disabled_at IS NOT NULL',
  // due at once (0), whatever clock the dispatcher reads: before the events recorded while disabled, in id order
  resumeWaiting: 'UPDATE webhook_deliveries SET next_attempt_at = 0 WHERE endpoint_id = ? AND failed_at IS NULL',
  hasEnabledEndpoints: 'SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL)'
} as const

type Statements = PreparedStatements<keyof typeof SQL>

/** The webhook endpoints in the embedded store, on the database's SQLite connection. */
export class SqliteWebhookEndpointStore implements WebhookEndpointStore {
  readonly #database: SqliteDatabase
  readonly #statements: () => Statements

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL, ['countEndpoints', 'hasEnabledEndpoints'])
  }

  async createWebhookEndpoint (endpoint: NewWebhookEndpoint, now: Date, { maxEndpoints, completing }: NewWebhookEndpointOptions = {}): Promise<WebhookEndpointRecord> {
    // counted and inserted under the one write lock: two creates never both take the last place
    const create = this.#database.connection.transaction((): WebhookEndpointRecord => {
      if (maxEndpoints !== undefined && (this.#statements().countEndpoints.get() as number) >= maxEndpoints) throw new WebhookEndpointLimitError(maxEndpoints)
      const created = rowToWebhookEndpoint(this.#statements().insertEndpoint.get({
        name: endpoint.name,
        url: endpoint.url,
        eventTypes: joinEventTypes(endpoint.eventTypes),
        secret: endpoint.secret,
        description: endpoint.description ?? null,
        rateLimit: endpoint.rateLimit ?? null,
        signing: endpoint.signing ?? 'hmac-sha256',
        publicKey: endpoint.publicKey ?? null,
        now: now.getTime(),
        disabledAt: endpoint.disabled === true ? now.getTime() : null
      }) as WebhookEndpointRow)
      if (completing !== undefined) {
        const { scope, key, token } = completing.claim
        // thrown, the transaction rolls back: nothing is registered under a claim taken over
        if (this.#statements().completeIdempotencyKey.run(201, completing.answer(created), scope, key, token).changes !== 1) throw new IdempotencyClaimLostError()
      }
      return created
    })
    return this.#run(() => create.immediate())
  }

  async findWebhookEndpoint (id: number): Promise<WebhookEndpointRecord | undefined> {
    return this.#run(() => {
      const row = this.#statements().findEndpoint.get(id) as WebhookEndpointRow | undefined
      return row === undefined ? undefined : rowToWebhookEndpoint(row)
    })
  }

  async listWebhookEndpoints (page?: WebhookEndpointPage): Promise<WebhookEndpointRecord[]> {
    // one read transaction: the endpoints and their counts from one snapshot
    const list = this.#database.connection.transaction(() => (this.#statements().listEndpoints.all(page?.afterId ?? 0, page?.limit ?? -1) as WebhookEndpointRow[]).map(rowToWebhookEndpoint))
    return this.#run(() => list.deferred())
  }

  async removeWebhookEndpoint (id: number): Promise<boolean> {
    // the deliveries and attempts go with it (ON DELETE CASCADE; the connection enables foreign keys)
    return this.#run(() => this.#statements().deleteEndpoint.run(id).changes === 1)
  }

  async rotateWebhookSecret (id: number, secret: string, previousUntil: Date, now: Date, publicKey?: string): Promise<boolean> {
    return this.#run(() => this.#statements().rotateSecret.run({ id, secret, publicKey: publicKey ?? null, until: previousUntil.getTime(), now: now.getTime() }).changes === 1)
  }

  async updateWebhookEndpoint (id: number, change: WebhookEndpointChange, now: Date, precondition?: (current: WebhookEndpointRecord) => boolean): Promise<WebhookEndpointUpdate> {
    const update = this.#database.connection.transaction((): WebhookEndpointUpdate => {
      const statements = this.#statements()
      const found = statements.findEndpoint.get(id) as WebhookEndpointRow | undefined
      if (found === undefined) return { outcome: 'not_found' }
      const before = rowToWebhookEndpoint(found)
      if (precondition !== undefined && !precondition(before)) return { outcome: 'precondition_failed', current: before }
      statements.changeSettings.run({
        id,
        name: change.name ?? null,
        url: change.url ?? null,
        setDescription: change.description === undefined ? 0 : 1,
        description: change.description ?? null,
        setRateLimit: change.rateLimit === undefined ? 0 : 1,
        rateLimit: change.rateLimit ?? null
      })
      const types = change.eventTypes
      if (types !== undefined && joinEventTypes(types) !== joinEventTypes(before.eventTypes)) {
        statements.scheduleKeptTypes.run(id, JSON.stringify(before.eventTypes.filter((type) => types.includes(type))))
        statements.setEventTypes.run(joinEventTypes(types), id)
        statements.dropUnwanted.run(id, JSON.stringify(types))
      }
      if (change.enabled === false) statements.disableEndpoint.run(now.getTime(), id)
      if (change.enabled === true && statements.enableEndpoint.run(id).changes === 1) statements.resumeWaiting.run(id)
      return { outcome: 'changed', before, after: rowToWebhookEndpoint(statements.findEndpoint.get(id) as WebhookEndpointRow) }
    })
    return this.#run(() => update.immediate())
  }

  async hasEnabledWebhookEndpoints (): Promise<boolean> {
    return this.#run(() => this.#statements().hasEnabledEndpoints.get() === 1)
  }

  #run<T>(operation: () => T): T {
    return this.#database.run(operation)
  }
}
