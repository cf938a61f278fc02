import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import { registerEventTypes } from '../events/index.js'
import { ORDER_EVENTS } from './order-event-schemas.js'
import { OrderCursorCodec } from './order-cursor.js'
import { ORDER_SCHEMAS } from './order-schemas.js'
import { createOrderStore } from './store/create-order-store.js'
import type { OrderStore } from './store/order-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Store orders: each change with its pet's status and both events, in one transaction. */
    orderStore: OrderStore
    /** Signs and reads listOrders' cursors, under a secret every instance of the database shares. */
    orderCursors: OrderCursorCodec
  }
}

/** The orders capability: its store and cursors on the app's database, and its schemas as the document's components, its event types registered with the feed. */
export const orders = fp(async (app) => {
  app.decorate('orderStore', app.instrumentStore(createOrderStore(app.database)))
  const cursorSecret = await app.database.ensureSetting('order_cursor_secret', randomBytes(32).toString('base64url'))
  app.decorate('orderCursors', new OrderCursorCodec(cursorSecret))
  for (const schema of ORDER_SCHEMAS) app.addSchema(schema)
  registerEventTypes(app, ORDER_EVENTS)
}, { name: 'petstore-orders', dependencies: ['petstore-database', 'petstore-pets'] })
