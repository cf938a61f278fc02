import fp from 'fastify-plugin'
import { PagedList } from '../../infra/http/paged-list.js'
import { registerEventTypes } from '../events/index.js'
import { ORDER_EVENTS } from './order-event-schemas.js'
import { ORDER_SCHEMAS, ORDERS_LIST } from './order-schemas.js'
import { createOrderStore } from './store/create-order-store.js'
import type { OrderStore } from './store/order-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Store orders: each change with its pet's status and both events, in one transaction. */
    orderStore: OrderStore
    /** listOrders' cursors and links, under a secret every instance of the database shares. */
    orderList: PagedList<'status' | 'petId'>
  }
}

/** The orders capability: its store and cursors on the app's database, and its schemas as the document's components, its event types registered with the feed. */
export const orders = fp(async (app) => {
  app.decorate('orderStore', app.instrumentStore(createOrderStore(app.database, app.clock)))
  app.decorate('orderList', await PagedList.open(app.database, ORDERS_LIST))
  for (const schema of ORDER_SCHEMAS) app.addSchema(schema)
  registerEventTypes(app, ORDER_EVENTS)
}, { name: 'petstore-orders', dependencies: ['petstore-database', 'petstore-pets'] })
