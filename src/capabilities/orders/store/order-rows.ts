import type { Order, OrderStatus } from '../order-schemas.js'

/** An orders row: SQLite keeps the time as ms, PostgreSQL as timestamptz (a Date). Ids stay below 2^53. */
export interface OrderRow {
  id: number
  pet_id: number
  status: OrderStatus
  placed_at: number | Date
}

/** The orders columns every query returns, in the order of {@link OrderRow}. */
export const ORDER_COLUMNS = 'id, pet_id, status, placed_at'

export function rowToOrder (row: OrderRow): Order {
  return { id: Number(row.id), petId: Number(row.pet_id), status: row.status, placedAt: new Date(row.placed_at).toISOString() }
}

/** The filters of a list page, as the name of the statement that serves them. */
export type OrderListVariant = 'all' | 'byStatus' | 'byPet' | 'byPetAndStatus'

export function listVariantOf (query: { status?: OrderStatus | undefined, petId?: unknown }): OrderListVariant {
  if (query.petId !== undefined) return query.status === undefined ? 'byPet' : 'byPetAndStatus'
  return query.status === undefined ? 'all' : 'byStatus'
}

/** The condition of each variant, with `param(n)` writing the engine's nth placeholder; the last two are afterId and the limit. */
export function listOrdersSql (variant: OrderListVariant, param: (n: number) => string): string {
  const conditions = { all: [], byStatus: ['status'], byPet: ['pet_id'], byPetAndStatus: ['pet_id', 'status'] }[variant]
  const where = [...conditions.map((column, index) => `${column} = ${param(index + 1)}`), `id > ${param(conditions.length + 1)}`].join(' AND ')
  return `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where} ORDER BY id LIMIT ${param(conditions.length + 2)}`
}

/** The values of a list statement, in its placeholders' order. */
export function listOrdersValues (query: { status?: OrderStatus | undefined, petId?: unknown, afterId?: number | undefined, limit: number }): unknown[] {
  const values: unknown[] = []
  if (query.petId !== undefined) values.push(query.petId)
  if (query.status !== undefined) values.push(query.status)
  // one row more than asked tells whether a next page exists
  return [...values, query.afterId ?? 0, query.limit + 1]
}
