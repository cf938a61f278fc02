import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { BusName, BusStatus } from './store/bus-position-store.js'

/**
 * The buses' metrics, declared by the capability and registered in the app's registry. Every configured bus has
 * each series from the start, at 0 (Prometheus' advice on missing series): an alert or a `rate()` sees the first
 * failure, not only the second.
 */
export class BusMetrics {
  readonly published: Counter<'bus'>
  readonly failures: Counter<'bus'>
  readonly retentionSkips: Counter<'bus'>
  readonly foreignDuplicates: Counter<'bus'>
  readonly leaseHandovers: Counter<'bus'>
  readonly publishLag: Histogram<'bus'>
  // one read of the store serves both gauges of a scrape, which prom-client collects at once
  #reading: Promise<void> | undefined

  /** `read` gives each bus's waiting events at a scrape; `now` is the app's clock. */
  constructor (registry: Registry, buses: readonly BusName[], read: () => Promise<BusStatus[]>, now: () => number) {
    const labelNames = ['bus'] as const
    const registers = [registry]
    const counter = (name: string, help: string): Counter<'bus'> => new Counter({ name, help, labelNames, registers })
    const gauge = (name: string, help: string): Gauge<'bus'> =>
      new Gauge({ name, help, labelNames, registers, collect: async () => { await this.#read(read, now, waiting, lag) } })
    this.published = counter('petstore_bus_published_events_total',
      'Events published to a message bus and acknowledged by its broker, by bus (nats, rabbitmq); an event published again after a failure counts again.')
    this.failures = counter('petstore_bus_publish_failures_total',
      'Batches a message bus did not acknowledge (broker down, refusing or slow), by bus: the batch waits in the outbox and is published again.')
    this.retentionSkips = counter('petstore_bus_retention_skips_total',
      'Times a bus fell behind event retention and skipped past the events retention had deleted, unpublished, by bus: any is an incident.')
    this.foreignDuplicates = counter('petstore_bus_foreign_duplicates_total',
      'Events the broker said it held already although this deployment had never published them (another deployment uses its message ids), by bus: any is an incident.')
    this.leaseHandovers = counter('petstore_bus_lease_handovers_total',
      'Times this instance gave a bus\'s lease up after failing to publish, so that another instance publishes, by bus.')
    this.publishLag = new Histogram({
      name: 'petstore_bus_publish_lag_seconds',
      help: 'Time from an event\'s commit (its occurredAt) to its broker\'s acknowledgement, by bus, one observation per event published.',
      labelNames,
      registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86_400]
    })
    const waiting = gauge('petstore_bus_waiting_events', 'Events recorded but not yet published to a bus, by bus, read from the store at each scrape.')
    const lag = gauge('petstore_bus_lag_seconds', 'Age of the oldest event not yet published to a bus (0 when none waits), by bus, read from the store at each scrape.')
    for (const bus of buses) {
      for (const series of [this.published, this.failures, this.retentionSkips, this.foreignDuplicates, this.leaseHandovers]) series.inc({ bus }, 0)
    }
  }

  async #read (read: () => Promise<BusStatus[]>, now: () => number, waiting: Gauge<'bus'>, lag: Gauge<'bus'>): Promise<void> {
    this.#reading ??= (async () => {
      // a store that cannot answer leaves the last reading: 0 would say "nothing waits"
      const buses = await read().catch(() => undefined)
      for (const { bus, waitingEvents, oldestWaitingAt } of buses ?? []) {
        waiting.set({ bus }, waitingEvents)
        lag.set({ bus }, oldestWaitingAt === undefined ? 0 : Math.max(0, (now() - oldestWaitingAt.getTime()) / 1000))
      }
    })().finally(() => { this.#reading = undefined })
    await this.#reading
  }
}
