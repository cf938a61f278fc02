/**
 * Store orders (beta): an order reserves a pet, sells it or frees it, each change with its pet's and
 * both events in one transaction; and the inventory, the count of pets by status.
 */
export { orders } from './orders-plugin.js'
export { default as ordersRoutes } from './orders-routes.js'
export { ORDER_STATUSES, type Order, type OrderStatus } from './order-schemas.js'
export { ORDER_TRANSITIONS, PET_STATUS_OF_ORDER } from './order-transitions.js'
export {
  ORDER_CREATED_EXAMPLE, ORDER_EVENTS, ORDER_UPDATED_EXAMPLE, OrderCreatedEventSchema, OrderUpdatedEventSchema,
  type OrderCreatedEvent, type OrderUpdatedEvent
} from './order-event-schemas.js'
export type { OrderStore } from './store/order-store.js'
