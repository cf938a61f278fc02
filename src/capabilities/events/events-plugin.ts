import fp from 'fastify-plugin'
import { feedSchemas } from './event-schemas.js'
import { EventRetention } from './event-retention.js'
import { eventTypesOf } from './event-types.js'
import { createEventStore } from './store/create-event-store.js'
import type { EventStore } from './store/event-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feed's read side and retention (the stores of the capabilities that record events write it). */
    eventStore: EventStore
    eventRetention: EventRetention
  }
}

/**
 * The change feed: its store, the schemas of the event types registered before it (by the capabilities that
 * record them) as the document's components, and the retention loop. It knows no producer: a type registered
 * after it is refused.
 */
export const events = fp(async (app) => {
  const store = app.instrumentStore(createEventStore(app.database))
  app.decorate('eventStore', store)
  const catalogue = eventTypesOf(app)
  catalogue.close()
  for (const schema of feedSchemas(catalogue)) app.addSchema(schema)
  app.decorate('eventRetention', app.background.start(new EventRetention(store, app.clock, app.log, app.config.eventRetentionDays, app.metrics)))
}, { name: 'petstore-events', dependencies: ['petstore-database', 'petstore-background'] })
