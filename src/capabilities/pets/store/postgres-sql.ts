import { EVENTS_RECORDED_CHANNEL } from '../../../infra/database/commit-signal.js'
import { LOCKS, lockSql } from '../../../infra/database/postgres/locks.js'
import { COMPLETE_CLAIM_SQL } from '../../idempotency/index.js'
import { PET_COLUMNS } from './rows.js'

/** Notified (with the schema as payload) whenever pets are added or changed. */
export const PETS_CHANGED_CHANNEL = 'petstore_pets_changed'

/**
 * The statements of the PostgreSQL pet store. Those with a name are prepared once per connection, then
 * only bound and executed: the ones on a request's path.
 */
export const SQL = {
  // Pet ids and event ids are drawn and committed in one order (the lock is held until commit), so a
  // reader never sees a pet or an event whose id is above one still being inserted: keyset pages and
  // the feed skip nothing. Each pet's pet.created event is written by the same statement
  insertPets: {
    name: 'petstore-insert-pets',
    text: `WITH ordered AS (SELECT ${lockSql(LOCKS.changes)}), ` +
      // delivered at commit to every instance listening: their cached list pages are stale, and there are events to deliver
      `notified AS (SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema()), pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema())), ` +
      'input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, position)), ' +
      'inserted AS (INSERT INTO pets (name, category_id, status) SELECT input.name, input.category_id, input.status FROM input, ordered, notified ' +
      `ORDER BY input.position RETURNING ${PET_COLUMNS}), ` +
      'recorded AS (INSERT INTO events (type, occurred_at, data) ' +
      "SELECT 'pet.created', $4, json_build_object('pet', json_build_object('id', id, 'name', name, 'categoryId', category_id, 'status', status)) " +
      'FROM inserted ORDER BY id) ' +
      `SELECT ${PET_COLUMNS} FROM inserted`
  },
  completeIdempotencyKeys: COMPLETE_CLAIM_SQL.postgres,
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
      `FROM ordered, (SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema()), pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema())) AS notified ` +
      'WHERE id = $4 RETURNING pets.id) ' +
      "INSERT INTO events (type, occurred_at, data) SELECT 'pet.updated', $5, $6::json FROM updated"
  },
  // by the partial unique index of open orders; the pet's row is locked, and placing an order locks it too
  findOpenOrder: { name: 'petstore-pet-find-open-order', text: "SELECT id FROM orders WHERE pet_id = $1 AND status IN ('placed', 'approved')" },
  // kept by statement triggers in every transaction that changes pets (migrations/postgres/0007_orders.sql)
  countPets: { name: 'petstore-count-pets', text: 'SELECT status, pets FROM pet_counts' },
  listPets: { name: 'petstore-list-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2` },
  listPetsByStatus: {
    name: 'petstore-list-pets-by-status',
    text: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`
  }
} as const
