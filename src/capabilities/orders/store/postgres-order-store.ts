import type pg from 'pg'
import { EVENTS_RECORDED_CHANNEL } from '../../../infra/database/commit-signal.js'
import { LOCKS, lockSql } from '../../../infra/database/postgres/locks.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError, type IdempotencyCompletion } from '../../idempotency/index.js'
import { notePetsChanged, PETS_CHANGED_CHANNEL, petUpdatedData, POSTGRES_PET_COLUMNS, rowToPet, type Pet, type PetRow, type PetStatus } from '../../pets/index.js'
import { decideOrderUpdate, decidePlacement, type OrderPrecondition, type OrderUpdateOutcome, type PlaceOrderOutcome } from '../order-decisions.js'
import { orderCreatedData, orderUpdatedData } from '../order-event-schemas.js'
import type { Order, OrderStatus } from '../order-schemas.js'
import { listOrdersSql, listOrdersValues, listVariantOf, ORDER_COLUMNS, rowToOrder, type OrderRow } from './order-rows.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import type { OrderPage, OrderPageQuery, OrderStore } from './order-store.js'
import { groupPlacements, type Placement } from './placements.js'

const param = (n: number): string => `$${n}`

/**
 * The statements of the PostgreSQL order store. Locks are always taken in one order — the order's row, then
 * the pet's row, then the changes lock (as updatePet takes the pet's row, then the changes lock) — so two
 * changes never wait on each other in a circle.
 */
const SQL = {
  findPetForUpdate: { name: 'petstore-orders-find-pet-for-update', text: `SELECT ${POSTGRES_PET_COLUMNS} FROM pets WHERE id = $1 FOR UPDATE` },
  // a batch's pets, locked in id order: two batches never hold each other's rows in a circle
  findPetsForUpdate: { name: 'petstore-orders-find-pets-for-update', text: `SELECT ${POSTGRES_PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE` },
  // event ids are drawn after the changes lock, so they stay in commit order; other instances' list pages and
  // webhook deliveries are told at commit
  lockChanges: {
    name: 'petstore-orders-lock-changes',
    text: `SELECT ${lockSql(LOCKS.changes)}, pg_notify('${PETS_CHANGED_CHANNEL}', current_schema()), pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema())`
  },
  setPetStatus: { name: 'petstore-orders-set-pet-status', text: 'UPDATE pets SET status = $1 WHERE id = $2' },
  // the partial unique index of open orders refuses a second one: then no row comes back
  insertOrder: {
    name: 'petstore-insert-order',
    text: "INSERT INTO orders (pet_id, status, placed_at) VALUES ($1, 'placed', $2) " +
      `ON CONFLICT (pet_id) WHERE status IN ('placed', 'approved') DO NOTHING RETURNING ${ORDER_COLUMNS}`
  },
  findOrder: { name: 'petstore-find-order', text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1` },
  findOrderForUpdate: { name: 'petstore-find-order-for-update', text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 FOR UPDATE` },
  setOrderStatus: { name: 'petstore-set-order-status', text: 'UPDATE orders SET status = $1 WHERE id = $2' },
  insertEvent: { name: 'petstore-orders-insert-event', text: 'INSERT INTO events (type, occurred_at, data) VALUES ($1, $2, $3::json)' },
  completeIdempotencyKeys: COMPLETE_CLAIM_SQL.postgres,
  all: { name: 'petstore-list-orders', text: listOrdersSql('all', param) },
  byStatus: { name: 'petstore-list-orders-by-status', text: listOrdersSql('byStatus', param) },
  byPet: { name: 'petstore-list-orders-by-pet', text: listOrdersSql('byPet', param) },
  byPetAndStatus: { name: 'petstore-list-orders-by-pet-and-status', text: listOrdersSql('byPetAndStatus', param) }
} as const

/** The orders of the shared PostgreSQL database: each change one transaction with its pet's change and both events. */
export class PostgresOrderStore implements OrderStore {
  readonly #database: PostgresDatabase
  readonly #placements = groupPlacements((placements) => this.#placeBatch(placements))

  constructor (database: PostgresDatabase) {
    this.#database = database
  }

  async placeOrder (petId: Int64, completing?: IdempotencyCompletion): Promise<PlaceOrderOutcome> {
    return await this.#placements.submit({ petId, completing })
  }

  /**
   * One transaction for the batch: its pets locked, the changes lock taken once, then each placement in
   * arrival order (a placement with an Idempotency-Key inside a savepoint, undone alone when its claim
   * was lost), so a burst of orders shares one lock wait and one commit instead of queueing for each.
   */
  async #placeBatch (placements: readonly Placement[]): Promise<Array<ItemOutcome<PlaceOrderOutcome>>> {
    let wrote = false
    try {
      return await this.#database.transaction(async (client) => {
        const { rows } = await client.query<PetRow>({ ...SQL.findPetsForUpdate, values: [placements.map((placement) => placement.petId)] })
        const pets = new Map(rows.map((row) => { const pet = rowToPet(row); return [String(pet.id), pet] }))
        if (placements.some((placement) => decidePlacement(pets.get(String(placement.petId))?.status).outcome === 'orderable')) {
          await client.query(SQL.lockChanges)
        }
        const outcomes: Array<ItemOutcome<PlaceOrderOutcome>> = []
        for (const placement of placements) {
          const outcome = await this.#placeLocked(client, pets, placement)
          if (outcome.ok && outcome.value.outcome === 'placed') wrote = true
          outcomes.push(outcome)
        }
        return outcomes
      })
    } finally {
      // before the 201s go out (and also when the commit's outcome is unknown): as after a pet's change
      if (wrote) notePetsChanged(this.#database)
    }
  }

  async #placeLocked (client: pg.PoolClient, pets: Map<string, Pet>, { petId, completing }: Placement): Promise<ItemOutcome<PlaceOrderOutcome>> {
    const pet = pets.get(String(petId))
    if (pet === undefined) return { ok: true, value: { outcome: 'pet_not_found' } }
    const decision = decidePlacement(pet.status)
    if (decision.outcome !== 'orderable') return { ok: true, value: decision }
    if (completing !== undefined) await client.query('SAVEPOINT placement')
    const now = new Date()
    const inserted = await client.query<OrderRow>({ ...SQL.insertOrder, values: [petId, now] })
    if (inserted.rows[0] === undefined) {
      if (completing !== undefined) await client.query('RELEASE SAVEPOINT placement')
      return { ok: true, value: { outcome: 'pet_not_available', petStatus: 'pending' } }
    }
    const order = rowToOrder(inserted.rows[0])
    await this.#movePet(client, pet, 'pending', now)
    await client.query({ ...SQL.insertEvent, values: ['order.created', now, stringifyJson(orderCreatedData(order))] })
    if (completing !== undefined) {
      const completed = await client.query({
        ...SQL.completeIdempotencyKeys,
        values: [[completing.scope], [completing.key], [completing.token], [stringifyJson(order)]]
      })
      if (completed.rows.length !== 1) {
        await client.query('ROLLBACK TO SAVEPOINT placement')
        return { ok: false, error: new IdempotencyClaimLostError() }
      }
      await client.query('RELEASE SAVEPOINT placement')
    }
    // a later order of this batch for the same pet finds it pending, as it would after this commit
    pets.set(String(petId), { ...pet, status: 'pending' })
    return { ok: true, value: { outcome: 'placed', order } }
  }

  async #movePet (client: pg.PoolClient, pet: Pet, status: PetStatus, now: Date): Promise<void> {
    await client.query({ ...SQL.setPetStatus, values: [status, pet.id] })
    await client.query({ ...SQL.insertEvent, values: ['pet.updated', now, stringifyJson(petUpdatedData(pet, { ...pet, status }))] })
  }

  async findOrderById (id: Int64): Promise<Order | undefined> {
    const rows = await this.#database.query<OrderRow>(SQL.findOrder, [id])
    return rows[0] === undefined ? undefined : rowToOrder(rows[0])
  }

  async listOrders (query: OrderPageQuery): Promise<OrderPage> {
    const rows = await this.#database.query<OrderRow>(SQL[listVariantOf(query)], listOrdersValues(query))
    return { orders: rows.slice(0, query.limit).map(rowToOrder), hasMore: rows.length > query.limit }
  }

  async updateOrder (id: Int64, status: OrderStatus, precondition?: OrderPrecondition): Promise<OrderUpdateOutcome> {
    let wrote = false
    try {
      return await this.#database.transaction(async (client) => {
        const { rows } = await client.query<OrderRow>({ ...SQL.findOrderForUpdate, values: [id] })
        const outcome = decideOrderUpdate(rows[0] === undefined ? undefined : rowToOrder(rows[0]), status, precondition)
        if (outcome.outcome !== 'updated' || outcome.order.status === outcome.previous.status) return outcome
        const now = new Date()
        let pet: Pet | undefined
        if (outcome.petStatus !== undefined) {
          const petRows = await client.query<PetRow>({ ...SQL.findPetForUpdate, values: [outcome.order.petId] })
          pet = rowToPet(petRows.rows[0] as PetRow)
        }
        await client.query(SQL.lockChanges)
        wrote = true
        await client.query({ ...SQL.setOrderStatus, values: [status, outcome.order.id] })
        if (pet !== undefined && outcome.petStatus !== undefined) await this.#movePet(client, pet, outcome.petStatus, now)
        await client.query({ ...SQL.insertEvent, values: ['order.updated', now, stringifyJson(orderUpdatedData(outcome.order, outcome.previous.status))] })
        return outcome
      })
    } finally {
      if (wrote) notePetsChanged(this.#database)
    }
  }
}
