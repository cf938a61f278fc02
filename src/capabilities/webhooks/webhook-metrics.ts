import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

/**
 * The webhooks' delivery metrics, declared by the capability and registered in the app's registry (the audit's
 * counter is `webhook-audit.ts`'s). The lag histogram and the oldest-undelivered gauge exist from the start, at 0;
 * the attempts' series carry an endpoint id, so each appears with its endpoint's first attempt.
 */
export class WebhookMetrics {
  /** Attempts by outcome (delivered, retrying, failed) and endpoint id. */
  readonly deliveries: Counter<'outcome' | 'endpoint_id'>
  /** Time of each attempt, by outcome. */
  readonly deliveryDuration: Histogram<'outcome'>
  /** Time from an event's commit to its delivery, one observation per delivery. */
  readonly deliveryLag: Histogram

  /** `oldest` gives the time of the oldest event still waiting for a delivery at a scrape; `now` is the app's clock. */
  constructor (registry: Registry, oldest: () => Promise<Date | undefined>, now: () => number) {
    const registers = [registry]
    this.deliveries = new Counter({
      name: 'petstore_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (delivered; retrying: failed, another attempt is scheduled; failed: given up after the schedule) and endpoint id.',
      labelNames: ['outcome', 'endpoint_id'] as const,
      registers
    })
    this.deliveryDuration = new Histogram({
      name: 'petstore_webhook_delivery_duration_seconds',
      help: 'Time of each webhook delivery attempt, from connecting to the end of the answer (or the failure), by outcome.',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers
    })
    this.deliveryLag = new Histogram({
      name: 'petstore_webhook_delivery_lag_seconds',
      help: 'Time from an event\'s commit (its occurredAt) to its delivery to an endpoint, one observation per delivery: milliseconds when the receiver keeps up, the retry delays when it failed first.',
      // from a wake on commit with an instant receiver (milliseconds) to the last retry of the default schedule (3.3 days)
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400, 345_600],
      registers
    })
    const oldestAge = new Gauge({
      name: 'petstore_webhook_oldest_undelivered_event_age_seconds',
      help: 'Age of the oldest event not yet delivered to every endpoint that wants it (0 when none waits), read from the store at each scrape.',
      registers,
      // the instances share the queue, so each reports the same
      collect: async () => {
        // a store that cannot answer leaves the last reading: 0 would say "nothing waits"
        const at = await oldest().then((date) => ({ date }), () => undefined)
        if (at !== undefined) oldestAge.set(at.date === undefined ? 0 : Math.max(0, (now() - at.date.getTime()) / 1000))
      }
    })
  }
}
