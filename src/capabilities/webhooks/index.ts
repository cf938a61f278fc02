/** Webhooks: endpoints that receive the feed's events, signed per Standard Webhooks; the `webhooks` CLI commands. */
export { webhooks } from './webhooks-plugin.js'
export { describeDelivery, headerParameters as webhookHeaderParameters, webhooksDocument } from './webhooks-document.js'
