/** Liveness and readiness probes (`/healthz`, `/readyz`), outside `/v1` and without a key. */
export { default as healthRoutes } from './health-routes.js'
