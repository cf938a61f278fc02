import fp from 'fastify-plugin'
import { IdempotencyExpiry } from './idempotency-expiry.js'
import { IdempotentCreates } from './idempotent-creates.js'
import { createIdempotencyStore } from './store/create-idempotency-store.js'
import type { IdempotencyStore } from './store/idempotency-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Idempotency-Key records. */
    idempotencyStore: IdempotencyStore
    /** Creates at most once per Idempotency-Key: what a create route calls when the header is sent. */
    idempotentCreates: IdempotentCreates
    /** Deletes expired records, in the background and on demand (tests). */
    idempotencyExpiry: IdempotencyExpiry
  }
}

/** The idempotency capability: its store, the service create routes call, and the loop that deletes expired records. */
export const idempotency = fp(async (app) => {
  const store = app.instrumentStore(createIdempotencyStore(app.database))
  app.decorate('idempotencyStore', store)
  app.decorate('idempotentCreates', new IdempotentCreates(store, app.clock, app.log))
  app.decorate('idempotencyExpiry', app.background.start(new IdempotencyExpiry(store, app.clock, app.log, app.metrics)))
}, { name: 'petstore-idempotency', dependencies: ['petstore-database', 'petstore-background'] })
