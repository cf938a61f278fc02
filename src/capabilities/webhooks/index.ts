/** Webhooks: endpoints that receive the feed's events, signed per Standard Webhooks; `/v1/webhook-endpoints` and the `webhooks` CLI commands that manage them. */
export { webhooks } from './webhooks-plugin.js'
export { default as webhookEndpointsRoutes } from './endpoint-routes.js'
export { describeDelivery, headerParameters as webhookHeaderParameters, webhooksDocument } from './webhooks-document.js'
export { ENDPOINT_RATE_LIMIT_MAX, WEBHOOK_ENDPOINTS_MAX } from './endpoint-limits.js'
export { WEBHOOK_ERRORS } from './webhook-errors.js'
