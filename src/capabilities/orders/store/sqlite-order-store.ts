import type Database from 'better-sqlite3'
import type { NewEvent } from '../../../infra/database/new-event.js'
import type { PreparedStatements, SqliteDatabase } from '../../../infra/database/sqlite/sqlite-database.js'
import { recordSqliteEvents } from '../../../infra/database/sqlite/sqlite-outbox.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError, type IdempotencyCompletion } from '../../idempotency/index.js'
import { notePetsChanged, petUpdatedData, rowToPet, SQLITE_PET_COLUMNS, type Pet, type PetRow, type PetStatus } from '../../pets/index.js'
import { decideOrderUpdate, decidePlacement, type OrderPrecondition, type OrderUpdateOutcome, type PlaceOrderOutcome } from '../order-decisions.js'
import { orderCreatedData, orderUpdatedData } from '../order-event-schemas.js'
import type { Order, OrderStatus } from '../order-schemas.js'
import { listOrdersSql, listOrdersValues, listVariantOf, ORDER_COLUMNS, rowToOrder, type OrderRow } from './order-rows.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import type { OrderPage, OrderPageQuery, OrderStore } from './order-store.js'
import { groupPlacements, type Placement } from './placements.js'

const SQL = {
  findPet: `SELECT ${SQLITE_PET_COLUMNS} FROM pets WHERE id = ?`,
  setPetStatus: 'UPDATE pets SET status = ? WHERE id = ?',
  // the partial unique index of open orders refuses a second one: then no row comes back
  insertOrder: "INSERT INTO orders (pet_id, status, placed_at) VALUES (?, 'placed', ?) " +
    `ON CONFLICT (pet_id) WHERE status IN ('placed', 'approved') DO NOTHING RETURNING ${ORDER_COLUMNS}`,
  findOrder: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`,
  setOrderStatus: 'UPDATE orders SET status = ? WHERE id = ?',
  completeIdempotencyKey: COMPLETE_CLAIM_SQL.sqlite,
  all: listOrdersSql('all', () => '?'),
  byStatus: listOrdersSql('byStatus', () => '?'),
  byPet: listOrdersSql('byPet', () => '?'),
  byPetAndStatus: listOrdersSql('byPetAndStatus', () => '?')
} as const

type Place = (petId: Int64, completing: IdempotencyCompletion | undefined) => PlaceOrderOutcome
type PlaceAll = (placements: readonly Placement[]) => Array<ItemOutcome<PlaceOrderOutcome>>
type Update = (id: Int64, status: OrderStatus, precondition: OrderPrecondition | undefined) => OrderUpdateOutcome

/** The orders of the embedded database: each change in an IMMEDIATE transaction with its pet's change and both events (placements grouped). */
export class SqliteOrderStore implements OrderStore {
  readonly #database: SqliteDatabase
  readonly #db: Database.Database
  #prepared: PreparedStatements<keyof typeof SQL> | undefined
  #place: Database.Transaction<Place> | undefined
  #placeAll: Database.Transaction<PlaceAll> | undefined
  // orders placed together share one IMMEDIATE transaction: one commit (one fsync) for the batch
  readonly #placements = groupPlacements((placements) => this.#placeBatch(placements))
  #update: Database.Transaction<Update> | undefined

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#db = database.connection
  }

  // prepared on first use, because preparing needs the tables that migrating creates
  get #statements (): PreparedStatements<keyof typeof SQL> {
    this.#prepared ??= this.#database.prepare(SQL)
    return this.#prepared
  }

  async placeOrder (petId: Int64, completing?: IdempotencyCompletion): Promise<PlaceOrderOutcome> {
    return await this.#placements.submit({ petId, completing })
  }

  #placeBatch (placements: readonly Placement[]): Array<ItemOutcome<PlaceOrderOutcome>> {
    // each placement nested in the batch's transaction (a savepoint): a claim found lost undoes its order alone
    this.#place ??= this.#db.transaction<Place>((id, claim) => this.#placeLocked(id, claim))
    const place = this.#place
    this.#placeAll ??= this.#db.transaction<PlaceAll>((batch) => batch.map((placement) => {
      try {
        return { ok: true, value: place(placement.petId, placement.completing) }
      } catch (error) {
        if (error instanceof IdempotencyClaimLostError) return { ok: false, error }
        throw error
      }
    }))
    const placeAll = this.#placeAll
    return this.#database.run(() => placeAll.immediate(placements))
  }

  #placeLocked (petId: Int64, completing: IdempotencyCompletion | undefined): PlaceOrderOutcome {
    const statements = this.#statements
    const row = statements.findPet.get(petId) as PetRow | undefined
    const pet = row === undefined ? undefined : rowToPet(row)
    const decision = decidePlacement(pet?.status)
    if (decision.outcome !== 'orderable' || pet === undefined) return decision.outcome === 'orderable' ? { outcome: 'pet_not_found' } : decision
    const now = Date.now()
    const orderRow = statements.insertOrder.get(petId, now) as OrderRow | undefined
    if (orderRow === undefined) return { outcome: 'pet_not_available', petStatus: 'pending' }
    const order = rowToOrder(orderRow)
    recordSqliteEvents(this.#database, now, [this.#movePet(pet, 'pending'), { type: 'order.created', data: orderCreatedData(order) }])
    if (completing !== undefined) {
      const { changes } = statements.completeIdempotencyKey.run(201, stringifyJson(order), completing.scope, completing.key, completing.token)
      // thrown inside the transaction: it rolls back, the order is not placed
      if (changes !== 1) throw new IdempotencyClaimLostError()
    }
    return { outcome: 'placed', order }
  }

  /** Moves the pet to `status`; returns its pet.updated event, for the caller to record with its own. */
  #movePet (pet: Pet, status: PetStatus): NewEvent {
    this.#statements.setPetStatus.run(status, pet.id)
    // this connection's own commits leave data_version alone: the pet store must be told
    notePetsChanged(this.#database)
    return { type: 'pet.updated', data: petUpdatedData(pet, { ...pet, status }) }
  }

  async findOrderById (id: Int64): Promise<Order | undefined> {
    return this.#database.run(() => {
      const row = this.#statements.findOrder.get(id) as OrderRow | undefined
      return row === undefined ? undefined : rowToOrder(row)
    })
  }

  async listOrders (query: OrderPageQuery): Promise<OrderPage> {
    return this.#database.run(() => {
      const rows = this.#statements[listVariantOf(query)].all(...listOrdersValues(query)) as OrderRow[]
      return { orders: rows.slice(0, query.limit).map(rowToOrder), hasMore: rows.length > query.limit }
    })
  }

  async updateOrder (id: Int64, status: OrderStatus, precondition?: OrderPrecondition): Promise<OrderUpdateOutcome> {
    this.#update ??= this.#db.transaction<Update>((orderId, to, check) => this.#updateLocked(orderId, to, check))
    const update = this.#update
    return this.#database.run(() => update.immediate(id, status, precondition))
  }

  #updateLocked (id: Int64, status: OrderStatus, precondition: OrderPrecondition | undefined): OrderUpdateOutcome {
    const statements = this.#statements
    const row = statements.findOrder.get(id) as OrderRow | undefined
    const outcome = decideOrderUpdate(row === undefined ? undefined : rowToOrder(row), status, precondition)
    if (outcome.outcome !== 'updated' || outcome.order.status === outcome.previous.status) return outcome
    const now = Date.now()
    statements.setOrderStatus.run(status, outcome.order.id)
    const events: NewEvent[] = []
    if (outcome.petStatus !== undefined) events.push(this.#movePet(rowToPet(statements.findPet.get(outcome.order.petId) as PetRow), outcome.petStatus))
    events.push({ type: 'order.updated', data: orderUpdatedData(outcome.order, outcome.previous.status) })
    recordSqliteEvents(this.#database, now, events)
    return outcome
  }
}
