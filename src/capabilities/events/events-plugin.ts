import fp from 'fastify-plugin'
import { EVENT_SCHEMAS } from './event-schemas.js'
import { EventRetention } from './event-retention.js'
import { createEventStore } from './store/create-event-store.js'
import type { EventStore } from './store/event-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feed's read side and retention (the stores of the capabilities that record events write it). */
    eventStore: EventStore
    eventRetention: EventRetention
  }
}

/** The change feed: its store, its schemas as the document's components, and the retention loop. */
export const events = fp(async (app) => {
  const store = app.instrumentStore(createEventStore(app.database))
  app.decorate('eventStore', store)
  for (const schema of EVENT_SCHEMAS) app.addSchema(schema)
  app.decorate('eventRetention', app.background.start(new EventRetention(store, app.clock, app.log, app.config.eventRetentionDays, app.metrics)))
}, { name: 'petstore-events', dependencies: ['petstore-database', 'petstore-background', 'petstore-pets', 'petstore-orders'] })
