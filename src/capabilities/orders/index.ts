/** Store orders: `GET /v1/store/orders`, referred to by the interface but not shown there (501 in v1). */
export { default as ordersRoutes } from './orders-routes.js'
