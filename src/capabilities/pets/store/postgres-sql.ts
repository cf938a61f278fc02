import { API_KEY_COLUMNS, PET_COLUMNS } from './rows.js'

// Transaction-scoped advisory locks, one per purpose, keyed also by the schema so that
// two deployments sharing a database in different schemas never wait on each other
const LOCK_CLASS = 0x50530000 // "PS"
// `changes` is taken by every transaction that adds or changes a pet, before it draws a pet id or an
// event id, and held until its commit: ids are then drawn in commit order (docs/architecture.md). It was
// `petIds` (creates only) before events; the number is the same, so instances of both releases agree
export const LOCKS = { migrations: LOCK_CLASS + 1, changes: LOCK_CLASS + 2, firstApiKey: LOCK_CLASS + 3 } as const
export const lockSql = (purpose: number): string => `pg_advisory_xact_lock(${purpose}, hashtext(current_schema()))`

/** Notified (with the schema as payload) whenever pets are added or changed. */
export const PETS_CHANGED_CHANNEL = 'petstore_pets_changed'

// times as ms since the epoch: the shape decideClaim reads on both engines
const IDEMPOTENCY_ROW_COLUMNS = 'fingerprint, token, (extract(epoch FROM locked_until) * 1000)::float8 AS "lockedUntilMs", ' +
  'response_status AS "responseStatus", response_body AS "responseBody", (extract(epoch FROM expires_at) * 1000)::float8 AS "expiresAtMs"'

/**
 * The statements of the PostgreSQL store. Those with a name are prepared once per connection, then
 * only bound and executed: the ones on a request's path.
 */
export const SQL = {
  // Pet ids and event ids are drawn and committed in one order (the lock is held until commit), so a
  // reader never sees a pet or an event whose id is above one still being inserted: keyset pages and
  // the feed skip nothing. Each pet's pet.created event is written by the same statement
  insertPets: {
    name: 'petstore-insert-pets',
    text: `WITH ordered AS (SELECT ${lockSql(LOCKS.changes)}), ` +
      // delivered at commit to every instance listening: their cached list pages are stale
      `notified AS (SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema())), ` +
      'input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, position)), ' +
      'inserted AS (INSERT INTO pets (name, category_id, status) SELECT input.name, input.category_id, input.status FROM input, ordered, notified ' +
      `ORDER BY input.position RETURNING ${PET_COLUMNS}), ` +
      'recorded AS (INSERT INTO events (type, occurred_at, data) ' +
      "SELECT 'pet.created', $4, json_build_object('pet', json_build_object('id', id, 'name', name, 'categoryId', category_id, 'status', status)) " +
      'FROM inserted ORDER BY id) ' +
      `SELECT ${PET_COLUMNS} FROM inserted`
  },
  completeIdempotencyKeys: {
    name: 'petstore-complete-idempotency-keys',
    text: 'UPDATE idempotency_keys AS k SET token = NULL, locked_until = NULL, response_status = 201, response_body = c.body ' +
      'FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(scope, key, token, body) ' +
      'WHERE k.scope = c.scope AND k.key = c.key AND k.token = c.token RETURNING c.scope, c.key, c.token'
  },
  findPet: { name: 'petstore-find-pet', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1` },
  // the pets of the getPets that arrived together (GroupRead): one round trip for all of them
  findPets: { name: 'petstore-find-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[])` },
  // the row stays locked until commit: a racing update waits here, then reads what this one wrote
  findPetForUpdate: { name: 'petstore-find-pet-for-update', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1 FOR UPDATE` },
  // the row is locked already (findPetForUpdate); the changes lock is taken before the event id is drawn
  updatePet: {
    name: 'petstore-update-pet',
    text: `WITH ordered AS (SELECT ${lockSql(LOCKS.changes)}), ` +
      'updated AS (UPDATE pets SET name = $1, category_id = $2, status = $3 ' +
      `FROM ordered, (SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema())) AS notified WHERE id = $4 RETURNING pets.id) ` +
      "INSERT INTO events (type, occurred_at, data) SELECT 'pet.updated', $5, $6::json FROM updated"
  },
  listPets: { name: 'petstore-list-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2` },
  listPetsByStatus: {
    name: 'petstore-list-pets-by-status',
    text: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`
  },
  findActiveApiKey: {
    name: 'petstore-find-active-api-key',
    text: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`
  },
  insertIdempotencyKey: {
    name: 'petstore-insert-idempotency-key',
    text: 'INSERT INTO idempotency_keys (fingerprint, token, locked_until, expires_at, scope, key) VALUES ($1, $2, $3, $4, $5, $6) ' +
      'ON CONFLICT (scope, key) DO NOTHING RETURNING 1 AS claimed'
  },
  findIdempotencyKeyForUpdate: { text: `SELECT ${IDEMPOTENCY_ROW_COLUMNS} FROM idempotency_keys WHERE scope = $1 AND key = $2 FOR UPDATE` },
  takeOverIdempotencyKey: {
    text: 'UPDATE idempotency_keys SET fingerprint = $1, token = $2, locked_until = $3, expires_at = $4, ' +
      'response_status = NULL, response_body = NULL WHERE scope = $5 AND key = $6'
  },
  releaseIdempotencyKey: { text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3' },
  deleteExpiredIdempotencyKeys: {
    text: 'WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS deleted FROM gone'
  },
  insertApiKey: { text: `INSERT INTO api_keys (name, key_hash, role, created_at) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY_COLUMNS}` },
  // after the firstApiKey lock: instances starting together queue there, and each then sees the others' committed keys
  insertFirstApiKey: {
    text: `INSERT INTO api_keys (name, key_hash, role, created_at) SELECT $1, $2, 'write', $3 WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${API_KEY_COLUMNS}`
  },
  listApiKeys: { text: `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY id` },
  revokeApiKey: { text: 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id' },
  touchApiKey: { name: 'petstore-touch-api-key', text: 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2' },
  insertSetting: { text: 'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING' },
  findSetting: { text: 'SELECT value FROM settings WHERE name = $1' },
  ping: { name: 'petstore-ping', text: 'SELECT 1' }
} as const

/** A statement of {@link SQL}. */
export interface Statement {
  readonly name?: string
  readonly text: string
}
