import { endpoint, expectShape, isObject } from './answers.js'
import { findLink } from './link-header.js'
import type { ClientSettings, RequestOptions } from './options.js'
import { send, type ApiAnswer } from './transport.js'
import type { Int64, Inventory, ListOrdersQuery, NewOrder, Order, OrderPage, OrderPatch, TaggedOrder } from './types.js'

/** Options of `placeOrder`. */
export interface PlaceOrderOptions extends RequestOptions {
  /**
   * Identifies this order across retries (1 to 255 visible ASCII characters; default: a new random
   * UUID per call). Within 24 hours, the same key and body give the first answer again, placing nothing.
   */
  idempotencyKey?: string
}

/** Options of `updateOrder`. */
export interface UpdateOrderOptions extends RequestOptions {
  /** Makes the change conditional (`If-Match`): an `etag` from `getOrder` or `updateOrder` (or `*`); else 412 `precondition_failed`. */
  ifMatch?: string
}

/** The query of `orders.all`: the filters and the page size (every page is fetched). */
export type AllOrdersQuery = Omit<ListOrdersQuery, 'cursor'>

/** The order operations of the client (beta), under `/store`. */
export interface OrderOperations {
  /**
   * Orders an `available` pet: the order is `placed` and the pet becomes `pending` in one
   * transaction. Always sends an `Idempotency-Key` and reuses it on every retry, so a retried
   * placement never orders twice. Fails with 409 `pet_not_available` (the pet is not available, or
   * has an open order) or 422 `pet_not_found`.
   */
  placeOrder (order: NewOrder, options?: PlaceOrderOptions): Promise<Order>
  /** One page of orders in `id` order (`limit` 1–100, default 20), optionally only those with `status` and of `petId`. */
  listOrders (query?: ListOrdersQuery, options?: RequestOptions): Promise<OrderPage>
  /** One order by id, with its `etag` (404 `order_not_found` when none has it). */
  getOrder (orderId: Int64, options?: RequestOptions): Promise<TaggedOrder>
  /**
   * Moves the order's `status` (`placed` → `approved` → `delivered`, `placed`/`approved` →
   * `cancelled`; else 409 `invalid_transition`), its pet with it; answers the order and its `etag`.
   * Retried like every call: the patch states the wanted status, so a repeat changes nothing more.
   */
  updateOrder (orderId: Int64, patch: OrderPatch, options?: UpdateOrderOptions): Promise<TaggedOrder>
  /** How many pets are `available`, `pending` and `sold`. */
  getInventory (options?: RequestOptions): Promise<Inventory>
  /** Helpers over the orders. */
  readonly orders: {
    /** Every order matching the filters, page after page, following the `next` links. */
    all (query?: AllOrdersQuery, options?: RequestOptions): AsyncGenerator<Order, void, undefined>
  }
}

/** The order operations over `settings`' transport. */
export function orderOperations (settings: ClientSettings): OrderOperations {
  const orderUrl = (orderId: Int64): URL => endpoint(settings, `/store/orders/${encodeURIComponent(String(orderId))}`)

  const tagged = (answer: ApiAnswer, operation: 'getOrder' | 'updateOrder'): TaggedOrder => {
    const etag = answer.response.headers.get('etag')
    return expectShape(isObject(answer.body) && etag !== null, { order: answer.body as Order, etag: etag as string }, operation, answer)
  }

  const listOrders = async (query: ListOrdersQuery = {}, { signal }: RequestOptions = {}): Promise<OrderPage> => {
    const url = endpoint(settings, '/store/orders')
    for (const name of ['limit', 'status', 'petId', 'cursor'] as const) {
      const value = query[name]
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const answer = await send(settings, { operation: 'listOrders', method: 'GET', url, signal })
    const orders = expectShape(Array.isArray(answer.body), answer.body as Order[], 'listOrders', answer)
    const next = findLink(answer.response.headers.get('link'), 'next', answer.response.url || url.href)
    if (next === undefined) return { orders }
    // like listPets: only the link's cursor is kept, and the next page is asked for at baseUrl
    const nextCursor = next.searchParams.get('cursor')
    return { orders, nextCursor: expectShape(nextCursor !== null && nextCursor !== '', nextCursor as string, 'listOrders', answer) }
  }

  return {
    listOrders,

    async placeOrder (order, { idempotencyKey = globalThis.crypto.randomUUID(), signal } = {}) {
      const answer = await send(settings, {
        operation: 'placeOrder',
        method: 'POST',
        url: endpoint(settings, '/store/orders'),
        body: order,
        headers: { 'idempotency-key': idempotencyKey },
        signal
      })
      return expectShape(isObject(answer.body), answer.body as Order, 'placeOrder', answer)
    },

    async getOrder (orderId, { signal } = {}) {
      return tagged(await send(settings, { operation: 'getOrder', method: 'GET', url: orderUrl(orderId), signal }), 'getOrder')
    },

    async updateOrder (orderId, patch, { ifMatch, signal } = {}) {
      const answer = await send(settings, {
        operation: 'updateOrder',
        method: 'PATCH',
        url: orderUrl(orderId),
        body: patch,
        contentType: 'application/merge-patch+json',
        headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
        signal
      })
      return tagged(answer, 'updateOrder')
    },

    async getInventory ({ signal } = {}) {
      const answer = await send(settings, { operation: 'getInventory', method: 'GET', url: endpoint(settings, '/store/inventory'), signal })
      return expectShape(isObject(answer.body), answer.body as Inventory, 'getInventory', answer)
    },

    orders: {
      async * all (query = {}, options = {}) {
        let cursor: string | undefined
        do {
          const page: OrderPage = await listOrders(cursor === undefined ? query : { ...query, cursor }, options)
          yield * page.orders
          cursor = page.nextCursor
        } while (cursor !== undefined)
      }
    }
  }
}
