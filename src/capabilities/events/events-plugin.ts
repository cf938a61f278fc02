import fp from 'fastify-plugin'
import { feedSchemas } from './event-schemas.js'
import { EventRetention } from './event-retention.js'
import { createEventSerializer, type EventSerializer } from './event-serializer.js'
import { EventChannels, registerEventChannel } from './event-channels.js'
import { eventTypesOf } from './event-types.js'
import { EVENT_STREAM_CHANNEL } from './stream/event-stream-channel.js'
import { StreamMetrics } from './stream/stream-metrics.js'
import { createEventStore } from './store/create-event-store.js'
import type { EventStore } from './store/event-store.js'
import { EventStreams } from './stream/event-streams.js'
import { EventTail } from './stream/event-tail.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feed's read side and retention (the stores of the capabilities that record events write it). */
    eventStore: EventStore
    eventRetention: EventRetention
    /** The streams of the feed open on this instance, and the tail that feeds them. */
    eventStreams: EventStreams
    /** How an event (or its `data`) is written, wherever it goes: pages, the stream, the buses. Compiled once. */
    eventSerializer: EventSerializer
  }
}

/**
 * The change feed: its store, the schemas of the event types registered before it (by the capabilities that
 * record them) as the document's components, the retention loop, and the streams (their tail is background
 * work; every stream ends at close, before HTTP drains, so the drain never waits on one). It knows no
 * producer: a type registered after it is refused.
 */
export const events = fp(async (app) => {
  const store = app.instrumentStore(createEventStore(app.database))
  app.decorate('eventStore', store)
  const catalogue = eventTypesOf(app)
  catalogue.close()
  for (const schema of feedSchemas(catalogue)) app.addSchema(schema)
  const serializer = createEventSerializer(() => app.getSchemas(), catalogue)
  app.decorate('eventSerializer', serializer)
  app.decorate('eventRetention', app.background.start(new EventRetention(store, app.clock, app.log, app.config.eventRetentionDays, app.metrics)))
  const streamMetrics = new StreamMetrics(app.metrics.registry)
  const tail = app.background.start(new EventTail({ store, serialize: serializer.event, database: app.database, metrics: app.metrics, streamMetrics, log: app.log }))
  const streams = new EventStreams(tail, app.config.eventStreams, streamMetrics)
  app.decorate('eventStreams', streams)
  app.addHook('preClose', async () => { streams.finishAll() })
  // the ways to receive the events: the stream first; webhooks and the buses add theirs
  app.decorate('eventChannels', new EventChannels())
  registerEventChannel(app, EVENT_STREAM_CHANNEL)
}, { name: 'petstore-events', dependencies: ['petstore-database', 'petstore-background'] })
