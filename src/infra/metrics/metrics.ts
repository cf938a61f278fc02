import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { TallyCounter, TallyHistogram } from './tally.js'

// seconds; most answers take well under a millisecond, a store outage up to a few seconds
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * The service's Prometheus metrics, in a registry of their own (one per app, so tests can
 * build several apps in one process). Served by `metrics-server.ts` on `METRICS_PORT`. The ones
 * counted on every request are tallies (tally.ts), summed into samples only when scraped.
 */
export class Metrics {
  readonly registry = new Registry()

  readonly requests = new TallyCounter({
    name: 'petstore_http_requests_total',
    help: 'HTTP answers, by operation id (or route for unversioned routes) and status.',
    labelNames: ['operation', 'method', 'status'] as const,
    registers: [this.registry]
  })

  readonly requestDuration = new TallyHistogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by operation and status.',
    labelNames: ['operation', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry]
  })

  readonly storeDuration = new TallyHistogram({
    name: 'petstore_store_query_duration_seconds',
    help: 'Time of each store call (one or a few SQL statements), by store method and outcome.',
    labelNames: ['method', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry]
  })

  readonly overloadShed = new Counter({
    name: 'petstore_overload_shed_total',
    help: 'Requests answered 503 overloaded at once, unread, because the event loop was past its bounds (OVERLOAD_*).',
    registers: [this.registry]
  })

  readonly backgroundPasses = new TallyCounter({
    name: 'petstore_background_passes_total',
    help: 'Passes of the background loops (idempotency_expiry, event_retention, webhook_delivery), by loop and outcome (done; more: work was left and another pass followed at once; failed; aborted: cut off by shutdown).',
    labelNames: ['loop', 'outcome'] as const,
    registers: [this.registry]
  })

  readonly backgroundPassDuration = new TallyHistogram({
    name: 'petstore_background_pass_duration_seconds',
    help: 'Time of each background pass, by loop: a look for work that finds none takes milliseconds, a retention pass over a backlog or a webhook endpoint served minutes.',
    labelNames: ['loop'] as const,
    buckets: [0.001, 0.01, 0.1, 1, 10, 60, 600],
    registers: [this.registry]
  })

  #readinessCheck: (() => Promise<void>) | undefined

  readonly ready = new Gauge({
    name: 'petstore_ready',
    help: '1 when the store answers (what GET /readyz checks, asked again at each scrape), 0 when it does not.',
    registers: [this.registry],
    // with WORKERS, the primary reports the least ready worker
    aggregator: 'min',
    collect: async () => {
      if (this.#readinessCheck === undefined) return
      try {
        await this.#readinessCheck()
        this.ready.set(1)
      } catch {
        this.ready.set(0)
      }
    }
  })

  /** Gives `petstore_ready` the check `GET /readyz` makes; until then it reads 0. */
  watchReadiness (check: () => Promise<void>): void {
    this.#readinessCheck = check
  }

  /** Adds Node's process metrics (CPU, memory, event loop, GC); only for a process that serves metrics. */
  collectProcessMetrics (): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'petstore_' })
  }
}
