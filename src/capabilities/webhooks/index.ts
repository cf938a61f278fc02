/** Webhooks: endpoints that receive the feed's events, signed per Standard Webhooks; the `webhooks` CLI commands. */
export { webhooks } from './webhooks-plugin.js'
export { webhooksDocument } from './webhooks-document.js'
export { runWebhookCommand, WEBHOOK_COMMAND_OPTIONS, WEBHOOK_COMMANDS, WebhookUsageError, type WebhookCommand } from './webhooks-cli.js'
