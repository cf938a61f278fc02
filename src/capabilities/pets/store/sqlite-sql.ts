import { exactInt64Column } from '../../../infra/database/sqlite/exact-int64.js'
import { COMPLETE_CLAIM_SQL } from '../../idempotency/index.js'

/** The pets columns every query returns, in the order of PetRow (rows.ts), the category id exactly (ids are assigned below 2^53). */
export const PET_COLUMNS = `id, name, ${exactInt64Column('category_id')}, status`

/** The statements of the SQLite pet store, as text. */
export const SQL = {
  insertPet: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
  findPet: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`,
  // the ids as a JSON array of integers
  findPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id IN (SELECT value FROM json_each(?))`,
  updatePet: 'UPDATE pets SET name = ?, category_id = ?, status = ? WHERE id = ?',
  // an order's pet moved by its order (pet-moves.ts)
  setPetStatus: 'UPDATE pets SET status = ? WHERE id = ?',
  completeIdempotencyKey: COMPLETE_CLAIM_SQL.sqlite,
  listPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  listPetsByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
  dataVersion: 'PRAGMA data_version',
  // kept by triggers in every transaction that changes pets (migrations/sqlite/0007_orders.sql)
  countPets: 'SELECT status, pets FROM pet_counts'
} as const
