import { sortedMetadata } from '../order-metadata.js'
import type { Order, OrderStatus } from '../order-schemas.js'

/** An orders row: SQLite keeps times as ms and metadata as JSON text, PostgreSQL times as timestamptz (a Date) and metadata as jsonb (parsed). Ids stay below 2^53. */
export interface OrderRow {
  id: number
  pet_id: number
  status: OrderStatus
  placed_at: number | Date
  approved_at: number | Date | null
  delivered_at: number | Date | null
  cancelled_at: number | Date | null
  cancellation_reason: string | null
  metadata: string | Record<string, unknown>
}

/** The orders columns every query returns, in the order of {@link OrderRow}. */
export const ORDER_COLUMNS = 'id, pet_id, status, placed_at, approved_at, delivered_at, cancelled_at, cancellation_reason, metadata'

const timeOf = (value: number | Date): string => new Date(value).toISOString()

export function rowToOrder (row: OrderRow): Order {
  const order: Order = { id: Number(row.id), petId: Number(row.pet_id), status: row.status, placedAt: timeOf(row.placed_at) }
  if (row.approved_at !== null) order.approvedAt = timeOf(row.approved_at)
  if (row.delivered_at !== null) order.deliveredAt = timeOf(row.delivered_at)
  if (row.cancelled_at !== null) order.cancelledAt = timeOf(row.cancelled_at)
  if (row.cancellation_reason !== null) order.cancellationReason = row.cancellation_reason
  // most orders have none: '{}' (SQLite's text) needs no parse
  order.metadata = row.metadata === '{}' ? {} : sortedMetadata(typeof row.metadata === 'string' ? JSON.parse(row.metadata) as Record<string, unknown> : row.metadata)
  return order
}

/** The time of an order field as a store writes it: ms on SQLite, a Date on PostgreSQL, null when absent. */
export function timeValue<T> (time: string | undefined, convert: (ms: number) => T): T | null {
  return time === undefined ? null : convert(Date.parse(time))
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
