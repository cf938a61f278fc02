import { EventRecordingStatement, KnownEventsStatement } from '../../../infra/database/postgres/postgres-outbox.js'
import { COMPLETE_CLAIM_SQL } from '../../idempotency/index.js'
import { petCreatedData } from '../pet-events.js'
import { PET_COLUMNS, PET_FIELD_COLUMNS } from './rows.js'

/** A JSON object whose values are SQL expressions (a column, or such an object) as the SQL that builds it. */
type JsonOfSql = { readonly [field: string]: string | JsonOfSql }
function jsonObjectSql (object: JsonOfSql): string {
  const fields = Object.entries(object).map(([field, value]) => `'${field}', ${typeof value === 'string' ? value : jsonObjectSql(value)}`)
  return `json_build_object(${fields.join(', ')})`
}

/** Notified (with the schema as payload) whenever pets are added or changed. */
export const PETS_CHANGED_CHANNEL = 'petstore_pets_changed'

/**
 * The statements of the PostgreSQL pet store. Those with a name are prepared once per connection, then
 * only bound and executed: the ones on a request's path. Those that record events are built and run by the
 * outbox's writer (`EventRecordingStatement`): one statement each, the change and its events.
 */
export const SQL = {
  // pet ids are drawn under the changes lock too (FROM ordered), so a keyset page never skips a pet whose id is below
  // one already committed; each pet's pet.created event is recorded by the same statement, in id order
  insertPets: new EventRecordingStatement('petstore-insert-pets', {
    change: 'input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, position)), ' +
      'inserted AS (INSERT INTO pets (name, category_id, status) SELECT input.name, input.category_id, input.status FROM input, ordered, notified ' +
      `ORDER BY input.position RETURNING ${PET_COLUMNS})`,
    events: {
      select: `'pet.created', $4, ${jsonObjectSql(petCreatedData(PET_FIELD_COLUMNS))}`,
      from: 'inserted',
      orderBy: 'id'
    },
    result: `SELECT ${PET_COLUMNS} FROM inserted`,
    // at commit, to every instance listening: their cached list pages are stale
    alsoNotify: [PETS_CHANGED_CHANNEL]
  }),
  completeIdempotencyKeys: COMPLETE_CLAIM_SQL.postgres,
  findPet: { name: 'petstore-find-pet', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1` },
  // the pets of the getPets that arrived together (GroupRead): one round trip for all of them
  findPets: { name: 'petstore-find-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[])` },
  // the row stays locked until commit: a racing update waits here, then reads what this one wrote
  findPetForUpdate: { name: 'petstore-find-pet-for-update', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1 FOR UPDATE` },
  // an order batch's pets (pet-moves.ts), locked in id order: two batches never hold each other's rows in a circle
  findPetsForUpdate: { name: 'petstore-find-pets-for-update', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE` },
  // pets moved by orders (pet-moves.ts), their rows locked already: each to its status ($4 the ids, $5 the statuses),
  // with the events the writer records after the move's ($1 to $3)
  movePets: new KnownEventsStatement('petstore-move-pets', {
    change: 'moved AS (UPDATE pets SET status = moves.status FROM unnest($4::bigint[], $5::text[]) AS moves (id, status) WHERE pets.id = moves.id)',
    alsoNotify: [PETS_CHANGED_CHANNEL]
  }),
  // the row is locked already (findPetForUpdate); its pet.updated event is recorded by the same statement
  updatePet: new EventRecordingStatement('petstore-update-pet', {
    change: 'updated AS (UPDATE pets SET name = $1, category_id = $2, status = $3 WHERE id = $4 RETURNING pets.id)',
    events: { select: "'pet.updated', $5, $6::json", from: 'updated', orderBy: 'updated.id' },
    alsoNotify: [PETS_CHANGED_CHANNEL]
  }),
  // kept by statement triggers in every transaction that changes pets (migrations/postgres/0007_orders.sql)
  countPets: { name: 'petstore-count-pets', text: 'SELECT status, pets FROM pet_counts' },
  listPets: { name: 'petstore-list-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2` },
  listPetsByStatus: {
    name: 'petstore-list-pets-by-status',
    text: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`
  }
} as const
