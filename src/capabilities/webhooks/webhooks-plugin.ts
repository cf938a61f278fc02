import fp from 'fastify-plugin'
import { createWebhookStore } from './store/create-webhook-store.js'
import type { WebhookStore } from './store/webhook-store.js'
import { WebhookDelivery } from './webhook-delivery.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhook endpoints and their delivery queue (registered by the CLI; delivered by the dispatcher). */
    webhookStore: WebhookStore
  }
}

/**
 * Webhooks: every instance delivers, once an endpoint is enabled; the queue and the leases live in the
 * database, and delivery is background work (stopped, its attempts in flight given their grace, before the
 * database closes).
 */
export const webhooks = fp(async (app) => {
  // not traced as store calls: the dispatcher makes a span of each attempt
  const store = app.instrumentStore(createWebhookStore(app.database), { traced: false })
  app.decorate('webhookStore', store)
  const { config, clock, log, metrics } = app
  app.background.start(new WebhookDelivery({ store, database: app.database, settings: config.webhooks, clock, log, metrics }))
  metrics.measureOldestUndelivered(async () => await store.oldestUndeliveredEventAt(), () => clock.now())
}, { name: 'petstore-webhooks', dependencies: ['petstore-database', 'petstore-background', 'petstore-events'] })
