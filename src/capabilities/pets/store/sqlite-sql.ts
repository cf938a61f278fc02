import { COMPLETE_CLAIM_SQL } from '../../idempotency/index.js'

// better-sqlite3 reads an INTEGER beyond 2^53 as a rounded number; reading every integer as a bigint
// (safeIntegers) would cost every ordinary row. So category_id comes back as a number when a double holds
// it exactly, else as its decimal text (rowToPet makes it a bigint). Ids are assigned below 2^53
const EXACT_CATEGORY_ID = `CASE WHEN category_id BETWEEN ${Number.MIN_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} ` +
  'THEN category_id ELSE CAST(category_id AS TEXT) END AS category_id'
/** The pets columns every query returns, in the order of PetRow (rows.ts), the category id exactly. */
export const PET_COLUMNS = `id, name, ${EXACT_CATEGORY_ID}, status`

/** The statements of the SQLite pet store, as text. */
export const SQL = {
  insertPet: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
  findPet: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`,
  updatePet: 'UPDATE pets SET name = ?, category_id = ?, status = ? WHERE id = ?',
  // an order's pet moved by its order (pet-moves.ts)
  setPetStatus: 'UPDATE pets SET status = ? WHERE id = ?',
  completeIdempotencyKey: COMPLETE_CLAIM_SQL.sqlite,
  listPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  listPetsByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
  dataVersion: 'PRAGMA data_version',
  // by the partial unique index of open orders: one row at most
  findOpenOrder: "SELECT id FROM orders WHERE pet_id = ? AND status IN ('placed', 'approved')",
  // kept by triggers in every transaction that changes pets (migrations/sqlite/0007_orders.sql)
  countPets: 'SELECT status, pets FROM pet_counts'
} as const
