import fp from 'fastify-plugin'
import type { Bus } from './bus.js'
import { BusRelay } from './bus-relay.js'
import { cloudEventWriter } from './cloud-event.js'
import { createBusPositionStore } from './store/create-bus-position-store.js'

/**
 * The message buses (`NATS_URL`, `AMQP_URL`): a relay per configured bus, started on every instance (one of
 * them publishes at a time, by lease). A broker's client is loaded only when its bus is configured, and no
 * connection is opened at start: a broker down at start, or for days, never stops the service from starting
 * or answering.
 */
export const buses = fp(async (app) => {
  const { nats, amqp } = app.config.buses
  const configured: Array<Promise<Bus>> = []
  if (nats !== undefined) configured.push(import('./nats-bus.js').then(({ NatsBus }) => new NatsBus(nats)))
  if (amqp !== undefined) configured.push(import('./rabbitmq-bus.js').then(({ RabbitMqBus }) => new RabbitMqBus(amqp)))
  if (configured.length === 0) return
  const positions = app.instrumentStore(createBusPositionStore(app.database), { traced: false })
  const toMessage = cloudEventWriter(app.getSchemas(), app.config.publicBaseUrl, app.eventTypes)
  const { clock, log, metrics } = app
  for (const bus of await Promise.all(configured)) {
    app.background.start(new BusRelay({ bus, positions, events: app.eventStore, database: app.database, toMessage, clock, log, metrics }))
    log.info({ bus: bus.name }, `publishing every event to ${bus.description}`)
  }
  const names = new Set<string>([...(nats === undefined ? [] : ['nats']), ...(amqp === undefined ? [] : ['rabbitmq'])])
  metrics.measureBuses(async () => (await positions.listBuses(clock.now())).filter(({ bus }) => names.has(bus)), () => clock.now())
}, { name: 'petstore-buses', dependencies: ['petstore-database', 'petstore-background', 'petstore-events'] })
