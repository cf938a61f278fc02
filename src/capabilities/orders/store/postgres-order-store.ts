import type pg from 'pg'
import type { NewEvent } from '../../../infra/database/new-event.js'
import type { PostgresDatabase } from '../../../infra/database/postgres/postgres-database.js'
import { commitOrderedStatement, recordPostgresEvents } from '../../../infra/database/postgres/postgres-outbox.js'
import { stringifyJson } from '../../../infra/json/exact-json.js'
import type { Int64 } from '../../../infra/json/int64.js'
import type { Clock } from '../../../infra/runtime/clock.js'
import { COMPLETE_CLAIM_SQL, IdempotencyClaimLostError, type IdempotencyCompletion } from '../../idempotency/index.js'
import { PostgresPetMoves, registerPostgresOpenOrders, type Pet, type PetMove } from '../../pets/index.js'
import { decideOrderUpdate, decidePlacement, writesOrder, type OrderChange, type OrderPrecondition, type OrderUpdateOutcome, type PlaceOrderOutcome } from '../order-decisions.js'
import type { Metadata } from '../order-metadata.js'
import { orderCreatedData, orderUpdatedData } from '../order-event-schemas.js'
import type { Order } from '../order-schemas.js'
import { OPEN_ORDER_STATUSES } from '../order-transitions.js'
import { listOrdersSql, listOrdersValues, listVariantOf, ORDER_COLUMNS, rowToOrder, timeValue, type OrderRow } from './order-rows.js'
import type { ItemOutcome } from '../../../infra/database/group-commit.js'
import type { OrderPage, OrderPageQuery, OrderStore } from './order-store.js'
import { groupPlacements, type Placement } from './placements.js'

const param = (n: number): string => `$${n}`
const OPEN_STATUSES = OPEN_ORDER_STATUSES.map((status) => `'${status}'`).join(', ')

// what a batch that found a claim lost returns, so that it is rolled back and placed again one by one
const CLAIM_LOST = Symbol('claim lost')

/**
 * The statements of the PostgreSQL order store. Locks are always taken in one order — the order's row, then
 * the pet's row, then the changes lock, then (moving the pet) the `pet_counts` rows, as updatePet takes them —
 * so two changes never wait on each other in a circle. The pets' port takes the pets' locks and moves them; the
 * changes lock comes with the first statement that draws order ids or records events.
 */
const SQL = {
  // a batch's orders, after its pets were locked, their ids drawn in commit order: inserted in arrival order ($2 the
  // positions); an order refused by the index returns no row
  insertOrders: commitOrderedStatement('petstore-insert-orders', {
    change: 'input AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $4::text[]) AS t (pet_id, position, metadata)), ' +
      "inserted AS (INSERT INTO orders (pet_id, status, placed_at, metadata) SELECT input.pet_id, 'placed', $3::timestamptz, input.metadata::jsonb " +
      'FROM input, ordered ORDER BY input.position ' +
      `ON CONFLICT (pet_id) WHERE status IN (${OPEN_STATUSES}) DO NOTHING RETURNING ${ORDER_COLUMNS})`,
    result: `SELECT ${ORDER_COLUMNS} FROM inserted`
  }),
  // one order, its id drawn in commit order; the partial unique index of open orders refuses a second one: then no row comes back
  insertOrder: commitOrderedStatement('petstore-insert-order', {
    change: "inserted AS (INSERT INTO orders (pet_id, status, placed_at, metadata) SELECT $1::bigint, 'placed', $2::timestamptz, $3::jsonb FROM ordered " +
      `ON CONFLICT (pet_id) WHERE status IN (${OPEN_STATUSES}) DO NOTHING RETURNING ${ORDER_COLUMNS})`,
    result: `SELECT ${ORDER_COLUMNS} FROM inserted`
  }),
  findOrder: { name: 'petstore-find-order', text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1` },
  findOrderForUpdate: { name: 'petstore-find-order-for-update', text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 FOR UPDATE` },
  setOrder: {
    name: 'petstore-set-order',
    text: 'UPDATE orders SET status = $1, approved_at = $2, delivered_at = $3, cancelled_at = $4, cancellation_reason = $5, metadata = $6::jsonb WHERE id = $7'
  },
  // by the partial unique index of open orders; the pet's row is locked by updatePet, and placing an order locks it too
  findOpenOrder: { name: 'petstore-find-open-order-of-pet', text: `SELECT id FROM orders WHERE pet_id = $1 AND status IN (${OPEN_STATUSES})` },
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
  // the pets' port: an order locks and moves its pet only through it
  readonly #pets: PostgresPetMoves
  readonly #clock: Clock

  constructor (database: PostgresDatabase, clock: Clock) {
    this.#database = database
    this.#clock = clock
    this.#pets = new PostgresPetMoves(database)
    // how updatePet asks, in its transaction, whether a pet has an open order
    registerPostgresOpenOrders(database, async (client, petId) => {
      const { rows } = await client.query<{ id: string | number }>({ ...SQL.findOpenOrder, values: [petId] })
      return rows[0] === undefined ? undefined : Number(rows[0].id)
    })
  }

  /** The pets of a batch, locked in id order, by id as text (what a placement names them by). */
  async #lockPets (client: pg.PoolClient, placements: readonly Placement[]): Promise<Map<string, Pet>> {
    return await this.#pets.lockPets(client, placements.map((placement) => placement.petId))
  }

  async placeOrder (petId: Int64, metadata: Metadata, completing?: IdempotencyCompletion): Promise<PlaceOrderOutcome> {
    return await this.#placements.submit({ petId, metadata, completing })
  }

  /**
   * One transaction for the batch, four round trips whatever its size: its pets locked in id order (as a
   * pet's change locks its row, then the changes lock), each placement judged on them in arrival order,
   * the orders inserted under the changes lock, their pets made pending with the events recorded in that
   * order, the claims completed. A batch in which a claim was found lost is rolled back and placed again
   * one by one, each such placement in a savepoint, so that only those orders are undone.
   */
  async #placeBatch (placements: readonly Placement[]): Promise<Array<ItemOutcome<PlaceOrderOutcome>>> {
    const grouped = await this.#database.transaction(async (client) => await this.#placeTogether(client, placements), (outcomes) => outcomes === CLAIM_LOST)
    if (grouped !== CLAIM_LOST) return grouped
    return await this.#database.transaction(async (client) => {
      const pets = await this.#lockPets(client, placements)
      // each placement's statements take the changes lock again: one rolled back to its savepoint lets go of what it took
      const outcomes: Array<ItemOutcome<PlaceOrderOutcome>> = []
      for (const placement of placements) outcomes.push(await this.#placeLocked(client, pets, placement))
      return outcomes
    })
  }

  async #placeTogether (client: pg.PoolClient, placements: readonly Placement[]): Promise<Array<ItemOutcome<PlaceOrderOutcome>> | typeof CLAIM_LOST> {
    const locked = await this.#lockPets(client, placements)
    const pets = new Map(locked)
    // each placement judged on the pets as the ones before it left them: a second order for a pet is refused
    const outcomes: Array<PlaceOrderOutcome | 'orderable'> = placements.map(({ petId }) => {
      const pet = pets.get(String(petId))
      if (pet === undefined) return { outcome: 'pet_not_found' }
      const decision = decidePlacement(pet.status)
      if (decision.outcome !== 'orderable') return decision
      pets.set(String(petId), { ...pet, status: 'pending' })
      return 'orderable'
    })
    const positions = outcomes.flatMap((outcome, index) => outcome === 'orderable' ? [index] : [])
    if (positions.length > 0) {
      const now = new Date(this.#clock.now())
      const inserted = await client.query<OrderRow>({
        ...SQL.insertOrders,
        values: [positions.map((index) => placements[index]?.petId), positions, now, positions.map((index) => JSON.stringify(placements[index]?.metadata ?? {}))]
      })
      const orders = new Map(inserted.rows.map((row) => { const order = rowToOrder(row); return [String(order.petId), order] }))
      const moves: PetMove[] = []
      const completing: Array<{ claim: IdempotencyCompletion, order: Order }> = []
      for (const index of positions) {
        const placement = placements[index] as Placement
        const order = orders.get(String(placement.petId))
        if (order === undefined) {
          outcomes[index] = { outcome: 'pet_not_available', petStatus: 'pending' }
          continue
        }
        const pet = locked.get(String(placement.petId)) as Pet
        moves.push({ pet, status: 'pending', followedBy: [{ type: 'order.created', data: orderCreatedData(order) }] })
        if (placement.completing !== undefined) completing.push({ claim: placement.completing, order })
        outcomes[index] = { outcome: 'placed', order }
      }
      await this.#pets.movePets(client, moves, now)
      if (completing.length > 0) {
        const completed = await client.query({
          ...SQL.completeIdempotencyKeys,
          values: [completing.map(({ claim }) => claim.scope), completing.map(({ claim }) => claim.key), completing.map(({ claim }) => claim.token),
            completing.map(({ order }) => stringifyJson(order))]
        })
        if (completed.rows.length !== completing.length) return CLAIM_LOST
      }
    }
    return outcomes.map((outcome) => ({ ok: true, value: outcome === 'orderable' ? { outcome: 'pet_not_available', petStatus: 'pending' } : outcome }))
  }

  async #placeLocked (client: pg.PoolClient, pets: Map<string, Pet>, { petId, metadata, completing }: Placement): Promise<ItemOutcome<PlaceOrderOutcome>> {
    const pet = pets.get(String(petId))
    if (pet === undefined) return { ok: true, value: { outcome: 'pet_not_found' } }
    const decision = decidePlacement(pet.status)
    if (decision.outcome !== 'orderable') return { ok: true, value: decision }
    if (completing !== undefined) await client.query('SAVEPOINT placement')
    const now = new Date(this.#clock.now())
    const inserted = await client.query<OrderRow>({ ...SQL.insertOrder, values: [petId, now, JSON.stringify(metadata)] })
    if (inserted.rows[0] === undefined) {
      if (completing !== undefined) await client.query('RELEASE SAVEPOINT placement')
      return { ok: true, value: { outcome: 'pet_not_available', petStatus: 'pending' } }
    }
    const order = rowToOrder(inserted.rows[0])
    await this.#pets.movePets(client, [{ pet, status: 'pending', followedBy: [{ type: 'order.created', data: orderCreatedData(order) }] }], now)
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

  async findOrderById (id: Int64): Promise<Order | undefined> {
    const rows = await this.#database.query<OrderRow>(SQL.findOrder, [id])
    return rows[0] === undefined ? undefined : rowToOrder(rows[0])
  }

  async listOrders (query: OrderPageQuery): Promise<OrderPage> {
    const rows = await this.#database.query<OrderRow>(SQL[listVariantOf(query)], listOrdersValues(query))
    return { orders: rows.slice(0, query.limit).map(rowToOrder), hasMore: rows.length > query.limit }
  }

  async updateOrder (id: Int64, change: OrderChange, precondition?: OrderPrecondition): Promise<OrderUpdateOutcome> {
    return await this.#database.transaction(async (client) => {
      const { rows } = await client.query<OrderRow>({ ...SQL.findOrderForUpdate, values: [id] })
      const now = new Date(this.#clock.now())
      const outcome = decideOrderUpdate(rows[0] === undefined ? undefined : rowToOrder(rows[0]), change, now, precondition)
      if (!writesOrder(outcome)) return outcome
      const { order } = outcome
      // the order's pet exists: the orders' foreign key keeps it
      const pet = outcome.petStatus === undefined ? undefined : await this.#pets.lockPet(client, order.petId)
      const date = (ms: number): Date => new Date(ms)
      // the order's row is locked already, and neither a trigger nor a new id follows from this write: the changes lock comes with the events
      await client.query({
        ...SQL.setOrder,
        values: [order.status, timeValue(order.approvedAt, date), timeValue(order.deliveredAt, date), timeValue(order.cancelledAt, date),
          order.cancellationReason ?? null, JSON.stringify(order.metadata ?? {}), order.id]
      })
      const updated: NewEvent = { type: 'order.updated', data: orderUpdatedData(outcome.previous, order) }
      if (pet !== undefined && outcome.petStatus !== undefined) await this.#pets.movePets(client, [{ pet, status: outcome.petStatus, followedBy: [updated] }], now)
      else await recordPostgresEvents(this.#database, client, now, [updated])
      return outcome
    })
  }
}
