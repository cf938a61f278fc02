import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
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

  readonly rateLimitRejections = new Counter({
    name: 'petstore_rate_limit_rejections_total',
    help: 'Requests answered 429, by rate-limit policy.',
    labelNames: ['policy'] as const,
    registers: [this.registry]
  })

  readonly rateLimitStoreErrors = new Counter({
    name: 'petstore_rate_limit_store_errors_total',
    help: 'Rate-limit checks skipped because the counter store (Redis) failed; those requests were served unlimited.',
    registers: [this.registry]
  })

  readonly overloadShed = new Counter({
    name: 'petstore_overload_shed_total',
    help: 'Requests answered 503 overloaded at once, unread, because the event loop was past its bounds (OVERLOAD_*).',
    registers: [this.registry]
  })

  readonly deprecatedCalls = new TallyCounter({
    name: 'petstore_deprecated_operation_calls_total',
    help: 'Authenticated calls of deprecated operations, by operation, API key name and role: who still calls them before the sunset.',
    labelNames: ['operation', 'api_key', 'role'] as const,
    registers: [this.registry]
  })

  readonly insufficientScope = new Counter({
    name: 'petstore_insufficient_scope_total',
    help: 'Requests answered 403 insufficient_scope (a key without the write role called an operation that writes), by operation, API key name and role.',
    labelNames: ['operation', 'api_key', 'role'] as const,
    registers: [this.registry]
  })

  readonly petTransitions = new Counter({
    name: 'petstore_pet_transitions_total',
    help: 'Pet status changes made by updatePet, by the status before (from) and after (to); a change that keeps the status is not counted.',
    labelNames: ['from', 'to'] as const,
    registers: [this.registry]
  })

  readonly webhookDeliveries = new Counter({
    name: 'petstore_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered; retrying: failed, another attempt is scheduled; failed: given up after the schedule) and endpoint id.',
    labelNames: ['outcome', 'endpoint_id'] as const,
    registers: [this.registry]
  })

  readonly webhookDeliveryDuration = new Histogram({
    name: 'petstore_webhook_delivery_duration_seconds',
    help: 'Time of each webhook delivery attempt, from connecting to the end of the answer (or the failure), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry]
  })

  readonly webhookDeliveryLag = new Histogram({
    name: 'petstore_webhook_delivery_lag_seconds',
    help: 'Time from an event\'s commit (its occurredAt) to its delivery to an endpoint, one observation per delivery: milliseconds when the receiver keeps up, the retry delays when it failed first.',
    // from a wake on commit with an instant receiver (milliseconds) to the last retry of the default schedule (3.3 days)
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400, 345_600],
    registers: [this.registry]
  })

  readonly eventStreamsOpen = new Gauge({
    name: 'petstore_event_streams_open',
    help: 'Streams of the change feed (GET /v1/events as text/event-stream) open on this instance now.',
    registers: [this.registry]
  })

  readonly eventStreamMessages = new Counter({
    name: 'petstore_event_stream_messages_total',
    help: 'Event messages written to the change feed\'s streams (one per event and stream; heartbeats not counted).',
    registers: [this.registry]
  })

  readonly eventStreamsEnded = new Counter({
    name: 'petstore_event_streams_ended_total',
    help: 'Streams of the change feed ended by the service, by reason (backlog: the consumer stopped reading and its unsent backlog passed EVENT_STREAM_MAX_BACKLOG_KIB, so it was cut; shutdown: the instance closed; failed: the store failed while it caught up; expired: retention deleted events after its position while it caught up, and its last message was the 410 events_expired as an error message). A consumer that hangs up is not counted.',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  readonly eventStreamsRefused = new Counter({
    name: 'petstore_event_streams_refused_total',
    help: 'Streams of the change feed refused at their start, by cap (per_key: EVENT_STREAM_MAX_PER_KEY, 429; per_instance: EVENT_STREAM_MAX_PER_INSTANCE, 503).',
    labelNames: ['cap'] as const,
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

  /**
   * Seconds since the oldest event still waiting for a webhook delivery occurred (0 when none waits):
   * what an alert on stuck deliveries watches. Read from the store when scraped, by `measure`.
   */
  readonly webhookOldestUndeliveredAge = new Gauge({
    name: 'petstore_webhook_oldest_undelivered_event_age_seconds',
    help: 'Age of the oldest event not yet delivered to every endpoint that wants it (0 when none waits), read from the store at each scrape.',
    registers: [this.registry],
    collect: async () => { await this.#measureOldestUndelivered?.() }
  })

  #measureOldestUndelivered: (() => Promise<void>) | undefined

  /** Reads the oldest undelivered event's time from `oldest` at each scrape (the instances share the queue, so each reports the same). */
  measureOldestUndelivered (oldest: () => Promise<Date | undefined>, now: () => number): void {
    this.#measureOldestUndelivered = async () => {
      // a store that cannot answer leaves the last reading: 0 would say "nothing waits"
      const at = await oldest().then((date) => ({ date }), () => undefined)
      if (at !== undefined) this.webhookOldestUndeliveredAge.set(at.date === undefined ? 0 : Math.max(0, (now() - at.date.getTime()) / 1000))
    }
  }

  readonly busPublished = new Counter({
    name: 'petstore_bus_published_events_total',
    help: 'Events published to a message bus and acknowledged by its broker, by bus (nats, rabbitmq); an event published again after a failure counts again.',
    labelNames: ['bus'] as const,
    registers: [this.registry]
  })

  readonly busFailures = new Counter({
    name: 'petstore_bus_publish_failures_total',
    help: 'Batches a message bus did not acknowledge (broker down, refusing or slow), by bus: the batch waits in the outbox and is published again.',
    labelNames: ['bus'] as const,
    registers: [this.registry]
  })

  readonly busRetentionSkips = new Counter({
    name: 'petstore_bus_retention_skips_total',
    help: 'Times a bus fell behind event retention and skipped past the events retention had deleted, unpublished, by bus: any is an incident.',
    labelNames: ['bus'] as const,
    registers: [this.registry]
  })

  readonly busPublishLag = new Histogram({
    name: 'petstore_bus_publish_lag_seconds',
    help: 'Time from an event\'s commit (its occurredAt) to its broker\'s acknowledgement, by bus, one observation per event published.',
    labelNames: ['bus'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86_400],
    registers: [this.registry]
  })

  /** Per bus, the events waiting and the age of the oldest: read from the store when scraped (every instance reports the same). */
  readonly busWaitingEvents = new Gauge({
    name: 'petstore_bus_waiting_events',
    help: 'Events recorded but not yet published to a bus, by bus, read from the store at each scrape.',
    labelNames: ['bus'] as const,
    registers: [this.registry],
    collect: async () => { await this.#readBuses() }
  })

  readonly busLag = new Gauge({
    name: 'petstore_bus_lag_seconds',
    help: 'Age of the oldest event not yet published to a bus (0 when none waits), by bus, read from the store at each scrape.',
    labelNames: ['bus'] as const,
    registers: [this.registry],
    collect: async () => { await this.#readBuses() }
  })

  #measureBuses: (() => Promise<void>) | undefined
  // one read of the store serves both gauges of a scrape, which prom-client collects at once
  #busReading: Promise<void> | undefined

  async #readBuses (): Promise<void> {
    this.#busReading ??= (this.#measureBuses?.() ?? Promise.resolve()).finally(() => { this.#busReading = undefined })
    await this.#busReading
  }

  /** Reads each bus's waiting events and the time of the oldest from `read` at each scrape. */
  measureBuses (read: () => Promise<Array<{ bus: string, waitingEvents: number, oldestWaitingAt: Date | undefined }>>, now: () => number): void {
    this.#measureBuses = async () => {
      // a store that cannot answer leaves the last reading: 0 would say "nothing waits"
      const buses = await read().catch(() => undefined)
      for (const { bus, waitingEvents, oldestWaitingAt } of buses ?? []) {
        this.busWaitingEvents.set({ bus }, waitingEvents)
        this.busLag.set({ bus }, oldestWaitingAt === undefined ? 0 : Math.max(0, (now() - oldestWaitingAt.getTime()) / 1000))
      }
    }
  }

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
