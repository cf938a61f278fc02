import type Database from 'better-sqlite3'
import type { NewEvent } from '../../../infra/database/new-event.js'
import { isSqliteBusy } from '../../../infra/database/sqlite/errors.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { recordSqliteEvents } from '../../../infra/database/sqlite/sqlite-outbox.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError, writeBatchItem, type IdempotencyCompletion } from '../../idempotency/index.js'
import { registerSqliteOpenOrders, SqlitePetMoves } from '../../pets/index.js'
import { decideOrderUpdate, decidePlacement, writesOrder, type OrderChange, type OrderPrecondition, type OrderUpdateOutcome, type PlaceOrderOutcome } from '../order-decisions.js'
import type { Metadata } from '../order-metadata.js'
import { orderCreatedData, orderUpdatedData } from '../order-event-schemas.js'
import type { Order } from '../order-schemas.js'
import { OPEN_ORDER_STATUSES } from '../order-transitions.js'
import { listOrdersSql, listOrdersValues, listVariantOf, ORDER_COLUMNS, rowToOrder, timeValue, type OrderRow } from './order-rows.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import type { OrderPage, OrderPageQuery, OrderStore } from './order-store.js'
import { groupPlacements, type Placement } from './placements.js'

const SQL = {
  // the partial unique index of open orders refuses a second one: then no row comes back
  insertOrder: "INSERT INTO orders (pet_id, status, placed_at, metadata) VALUES (?, 'placed', ?, ?) " +
    `ON CONFLICT (pet_id) WHERE status IN ('placed', 'approved') DO NOTHING RETURNING ${ORDER_COLUMNS}`,
  findOrder: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`,
  setOrder: 'UPDATE orders SET status = ?, approved_at = ?, delivered_at = ?, cancelled_at = ?, cancellation_reason = ?, metadata = ? WHERE id = ?',
  // by the partial unique index of open orders: one row at most
  findOpenOrder: `SELECT id FROM orders WHERE pet_id = ? AND status IN (${OPEN_ORDER_STATUSES.map((status) => `'${status}'`).join(', ')})`,
  completeIdempotencyKey: COMPLETE_CLAIM_SQL.sqlite,
  all: listOrdersSql('all', () => '?'),
  byStatus: listOrdersSql('byStatus', () => '?'),
  byPet: listOrdersSql('byPet', () => '?'),
  byPetAndStatus: listOrdersSql('byPetAndStatus', () => '?')
} as const

type Place = (placement: Placement) => PlaceOrderOutcome
type PlaceAll = (placements: readonly Placement[]) => Array<ItemOutcome<PlaceOrderOutcome>>
type Update = (id: Int64, change: OrderChange, precondition: OrderPrecondition | undefined) => OrderUpdateOutcome

/** The orders of the embedded database: each change in one transaction with its pet's change and both events (placements grouped, IMMEDIATE; updates deferred until their first write). */
export class SqliteOrderStore implements OrderStore {
  readonly #database: SqliteDatabase
  readonly #db: Database.Database
  readonly #statements: () => PreparedStatements<keyof typeof SQL>
  #place: Database.Transaction<Place> | undefined
  #placeAll: Database.Transaction<PlaceAll> | undefined
  // orders placed together share one IMMEDIATE transaction: one commit (one fsync) for the batch
  readonly #placements = groupPlacements((placements) => this.#placeBatch(placements))
  #update: Database.Transaction<Update> | undefined
  // the pets' own statements: an order changes its pet only through them
  readonly #pets: SqlitePetMoves
  readonly #clock: Clock

  constructor (database: SqliteDatabase, clock: Clock) {
    this.#database = database
    this.#statements = database.preparedOnFirstUse(SQL)
    this.#clock = clock
    this.#db = database.connection
    this.#pets = new SqlitePetMoves(database)
    // how updatePet asks, in its transaction, whether a pet has an open order
    registerSqliteOpenOrders(database, (petId) => (this.#statements().findOpenOrder.get(petId) as { id: number } | undefined)?.id)
  }

  async placeOrder (petId: Int64, metadata: Metadata, completing?: IdempotencyCompletion): Promise<PlaceOrderOutcome> {
    return await this.#placements.submit({ petId, metadata, completing })
  }

  #placeBatch (placements: readonly Placement[]): Array<ItemOutcome<PlaceOrderOutcome>> {
    // a placement that completes a claim in a savepoint of its own, the others as they are (writeBatchItem says why)
    this.#place ??= this.#db.transaction<Place>((placement) => this.#placeLocked(placement))
    const place = this.#place
    this.#placeAll ??= this.#db.transaction<PlaceAll>((batch) => batch.map((placement) => writeBatchItem(placement, (plain) => this.#placeLocked(plain), place)))
    const placeAll = this.#placeAll
    return this.#database.run(() => placeAll.immediate(placements))
  }

  #placeLocked ({ petId, metadata, completing }: Placement): PlaceOrderOutcome {
    const statements = this.#statements()
    const pet = this.#pets.findPet(petId)
    const decision = decidePlacement(pet?.status)
    if (decision.outcome !== 'orderable' || pet === undefined) return decision.outcome === 'orderable' ? { outcome: 'pet_not_found' } : decision
    const now = this.#clock.now()
    const orderRow = statements.insertOrder.get(petId, now, JSON.stringify(metadata)) as OrderRow | undefined
    if (orderRow === undefined) return { outcome: 'pet_not_available', petStatus: 'pending' }
    const order = rowToOrder(orderRow)
    this.#pets.movePets([{ pet, status: 'pending', followedBy: [{ type: 'order.created', data: orderCreatedData(order) }] }], now)
    if (completing !== undefined) {
      const { changes } = statements.completeIdempotencyKey.run(201, stringifyJson(order), completing.scope, completing.key, completing.token)
      // thrown inside the transaction: it rolls back, the order is not placed
      if (changes !== 1) throw new IdempotencyClaimLostError()
    }
    return { outcome: 'placed', order }
  }

  async findOrderById (id: Int64): Promise<Order | undefined> {
    return this.#database.run(() => {
      const row = this.#statements().findOrder.get(id) as OrderRow | undefined
      return row === undefined ? undefined : rowToOrder(row)
    })
  }

  async listOrders (query: OrderPageQuery): Promise<OrderPage> {
    return this.#database.run(() => {
      const rows = this.#statements()[listVariantOf(query)].all(...listOrdersValues(query)) as OrderRow[]
      return { orders: rows.slice(0, query.limit).map(rowToOrder), hasMore: rows.length > query.limit }
    })
  }

  async updateOrder (id: Int64, change: OrderChange, precondition?: OrderPrecondition): Promise<OrderUpdateOutcome> {
    this.#update ??= this.#db.transaction<Update>((orderId, asked, check) => this.#updateInTransaction(orderId, asked, check))
    const update = this.#update
    return this.#database.run(() => {
      try {
        // deferred: the read takes no write lock, so a patch that writes nothing (a refusal, or what the order
        // already has) is answered without it, even while another process writes; the first write takes it
        return update.deferred(id, change, precondition)
      } catch (error) {
        // a deferred transaction that read cannot wait for the lock: read again under it, and judge again
        if (!isSqliteBusy(error)) throw error
        return update.immediate(id, change, precondition)
      }
    })
  }

  #updateInTransaction (id: Int64, change: OrderChange, precondition: OrderPrecondition | undefined): OrderUpdateOutcome {
    const statements = this.#statements()
    const row = statements.findOrder.get(id) as OrderRow | undefined
    const now = this.#clock.now()
    const outcome = decideOrderUpdate(row === undefined ? undefined : rowToOrder(row), change, new Date(now), precondition)
    if (!writesOrder(outcome)) return outcome
    const { order } = outcome
    const ms = (time: number): number => time
    statements.setOrder.run(order.status, timeValue(order.approvedAt, ms), timeValue(order.deliveredAt, ms), timeValue(order.cancelledAt, ms),
      order.cancellationReason ?? null, JSON.stringify(order.metadata ?? {}), order.id)
    const updated: NewEvent = { type: 'order.updated', data: orderUpdatedData(outcome.previous, order) }
    // the order's pet exists: the orders' foreign key keeps it
    const pet = outcome.petStatus === undefined ? undefined : this.#pets.findPet(order.petId)
    if (pet !== undefined && outcome.petStatus !== undefined) this.#pets.movePets([{ pet, status: outcome.petStatus, followedBy: [updated] }], now)
    else recordSqliteEvents(this.#database, now, [updated])
    return outcome
  }
}
