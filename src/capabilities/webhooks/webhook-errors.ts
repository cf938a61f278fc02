import { declareErrors } from '../../infra/errors/catalogue.js'

/** The error codes of `/v1/webhook-endpoints`, declared by this capability into the one catalogue (stable API: added to, never renamed). */
export const WEBHOOK_ERRORS = declareErrors({
  webhook_endpoint_not_found: { status: 404, message: 'No webhook endpoint has this id.' },
  webhook_endpoint_exists: { status: 409, message: 'A webhook endpoint with this URL is already registered.' },
  webhook_endpoint_limit_reached: { status: 409, message: 'The most webhook endpoints a deployment may have are registered; delete one first.' },
  webhook_endpoint_disabled: { status: 409, message: 'The webhook endpoint is disabled: nothing is sent to it until it is enabled.' }
})

declare module '../../infra/errors/catalogue.js' {
  interface DeclaredErrorCodes {
    webhook_endpoint_not_found: true
    webhook_endpoint_exists: true
    webhook_endpoint_limit_reached: true
    webhook_endpoint_disabled: true
  }
}
