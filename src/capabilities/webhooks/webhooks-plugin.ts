import fp from 'fastify-plugin'
import { CommitSignal } from '../../infra/database/commit-signal.js'
import { PagedList } from '../../infra/http/paged-list.js'
import { registerEventChannel } from '../events/index.js'
import { ENDPOINT_ACTION_SCHEMAS } from './endpoint-action-schemas.js'
import { createWebhookDeliveryLog } from './store/create-webhook-delivery-log.js'
import { createWebhookStore } from './store/create-webhook-store.js'
import type { WebhookDeliveryLog } from './store/webhook-delivery-log.js'
import type { WebhookStore } from './store/webhook-store.js'
import { WebhookDelivery } from './webhook-delivery.js'
import { RotatedSecretSchema, webhookEndpointSchemas } from './webhook-endpoint-schemas.js'
import { WEBHOOK_ATTEMPTS_LIST, WEBHOOK_ENDPOINTS_LIST } from './webhook-lists.js'
import { WebhookMetrics } from './webhook-metrics.js'
import { WEBHOOKS_CHANNEL } from './webhooks-channel.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhook endpoints and their delivery queue (registered by the CLI and `/v1/webhook-endpoints`; delivered by the dispatcher). */
    webhookStore: WebhookStore
    /** Each endpoint's delivery attempts, and what puts deliveries back in line (resend, recover, retry). */
    webhookDeliveryLog: WebhookDeliveryLog
    /** listWebhookEndpoints' cursors and links, under a secret every instance of the database shares. */
    webhookEndpointList: PagedList<never>
    /** listWebhookAttempts' cursors, bound to the endpoint and the status filter. */
    webhookAttemptList: PagedList<'endpoint' | 'status'>
  }
}

/**
 * Webhooks: every instance delivers, once an endpoint is enabled; the queue and the leases live in the
 * database, and delivery is background work (stopped, its attempts in flight given their grace, before the
 * database closes). The endpoints' schemas are the document's components; their routes are `webhookEndpointsRoutes`.
 */
export const webhooks = fp(async (app) => {
  // raised by the stores when deliveries become due without an event recorded: this instance's dispatcher wakes on it
  const deliveriesDue = new CommitSignal()
  // not traced as store calls: the dispatcher makes a span of each attempt
  const store = app.instrumentStore(createWebhookStore(app.database, deliveriesDue), { traced: false })
  app.decorate('webhookStore', store)
  app.decorate('webhookDeliveryLog', app.instrumentStore(createWebhookDeliveryLog(app.database, deliveriesDue)))
  app.decorate('webhookEndpointList', await PagedList.open(app.database, WEBHOOK_ENDPOINTS_LIST))
  app.decorate('webhookAttemptList', await PagedList.open(app.database, WEBHOOK_ATTEMPTS_LIST))
  // the API's schemas, as the document's components: the event types are the registry's, closed by now
  for (const schema of [...Object.values(webhookEndpointSchemas(app.eventTypes.types)), RotatedSecretSchema, ...ENDPOINT_ACTION_SCHEMAS]) app.addSchema(schema)
  registerEventChannel(app, WEBHOOKS_CHANNEL)
  const { config, clock, log, metrics } = app
  const webhookMetrics = new WebhookMetrics(metrics.registry, async () => await store.oldestUndeliveredEventAt(), () => clock.now())
  app.background.start(new WebhookDelivery({ store, database: app.database, deliveriesDue, settings: config.webhooks, clock, log, metrics, webhookMetrics, serializeEvent: app.eventSerializer.event }))
}, { name: 'petstore-webhooks', dependencies: ['petstore-database', 'petstore-background', 'petstore-events'] })
