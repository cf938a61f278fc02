import fp from 'fastify-plugin'
import { deploymentIdOf } from '../../infra/database/deployment-id.js'
import { registerEventChannel } from '../events/index.js'
import type { Bus } from './bus.js'
import { natsChannel, rabbitMqChannel } from './bus-channels.js'
import { BusMetrics } from './bus-metrics.js'
import { BusRelay } from './bus-relay.js'
import { cloudEventWriter, eventSourceOf } from './cloud-event.js'
import { createBusPositionStore } from './store/create-bus-position-store.js'

/**
 * The message buses (`NATS_URL`, `AMQP_URL`): a relay per configured bus, started on every instance (one of
 * them publishes at a time, by lease). A broker's client is loaded only when its bus is configured, and no
 * connection is opened at start: a broker down at start, or for days, never stops the service from starting
 * or answering.
 */
export const buses = fp(async (app) => {
  const { nats, amqp, ignored } = app.config.buses
  for (const variable of ignored) app.log.warn(`${variable} is set but does nothing without ${variable.startsWith('NATS') ? 'NATS_URL' : 'AMQP_URL'}`)
  const configured: Array<Promise<Bus>> = []
  // each configured bus is a way to receive the events: a channel of the AsyncAPI document
  if (nats !== undefined) {
    configured.push(import('./nats-bus.js').then(({ NatsBus }) => new NatsBus(nats)))
    registerEventChannel(app, natsChannel(nats))
  }
  if (amqp !== undefined) {
    configured.push(import('./rabbitmq-bus.js').then(({ RabbitMqBus }) => new RabbitMqBus(amqp)))
    registerEventChannel(app, rabbitMqChannel(amqp))
  }
  if (configured.length === 0) return
  const positions = app.instrumentStore(createBusPositionStore(app.database), { traced: false })
  const deploymentId = await deploymentIdOf(app.database)
  const toMessage = cloudEventWriter(app.eventSerializer, deploymentId, app.eventTypes)
  const { clock, log, metrics } = app
  const relayed = await Promise.all(configured)
  const names = new Set<string>(relayed.map(({ name }) => name))
  const busMetrics = new BusMetrics(metrics.registry, relayed.map(({ name }) => name),
    async () => (await positions.listBuses(clock.now())).filter(({ bus }) => names.has(bus)), () => clock.now())
  for (const bus of relayed) {
    // a new bus starts at the feed's head: taken here, before the app is ready, so that every event recorded once
    // it answers is published (a relay's first pass came later, and a create answered before it was skipped)
    await positions.ensureBus(bus.name)
    app.background.start(new BusRelay({ bus, positions, events: app.eventStore, database: app.database, toMessage, clock, log, metrics, busMetrics }))
    log.info({ bus: bus.name, source: eventSourceOf(deploymentId) }, `publishing every event to ${bus.description}, as source ${eventSourceOf(deploymentId)}`)
  }
}, { name: 'petstore-buses', dependencies: ['petstore-database', 'petstore-background', 'petstore-events'] })
