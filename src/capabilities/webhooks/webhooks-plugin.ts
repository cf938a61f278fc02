import fp from 'fastify-plugin'
import { createWebhookStore, type WebhookStore } from './store/webhook-store.js'
import { WebhookDispatcher } from './webhook-dispatcher.js'
import { WebhookSender } from './webhook-sender.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhook endpoints and their delivery queue (registered by the CLI; delivered by the dispatcher). */
    webhookStore: WebhookStore
  }
}

/**
 * Webhooks: every instance delivers; the queue and the leases live in the database, and the dispatcher
 * is background work (stopped, its attempts in flight given their grace, before the database closes).
 */
export const webhooks = fp(async (app) => {
  // not traced as store calls: the dispatcher makes a span of each attempt
  const store = app.instrumentStore(await createWebhookStore(app.database), { traced: false })
  app.decorate('webhookStore', store)
  const { config, clock, log, metrics } = app
  app.background.start(new WebhookDispatcher({ store, sender: new WebhookSender(config.webhooks), settings: config.webhooks, clock, log, metrics }))
  metrics.measureOldestUndelivered(async () => await store.oldestUndeliveredEventAt(), () => clock.now())
}, { name: 'petstore-webhooks', dependencies: ['petstore-database', 'petstore-background', 'petstore-events'] })
