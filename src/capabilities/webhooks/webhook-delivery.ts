import type { FastifyBaseLogger } from 'fastify'
import { BackgroundLoop } from '../../infra/background/background-loop.js'
import type { BackgroundWork } from '../../infra/background/background-work.js'
import type { WebhookSettings } from '../../infra/config/config.js'
import type { Database } from '../../infra/database/database.js'
import type { Metrics } from '../../infra/metrics/metrics.js'
import type { Clock } from '../../infra/runtime/clock.js'
import { watchRecordedEvents } from '../../infra/database/watch-recorded-events.js'
import type { WebhookStore } from './store/webhook-store.js'
import type { WebhookDispatcher } from './webhook-dispatcher.js'

export interface WebhookDeliveryOptions {
  store: WebhookStore
  /** Whose commits wake delivery: this instance's at once, others' once the dispatcher runs (watchRecordedEvents). */
  database: Database
  settings: WebhookSettings
  clock: Clock
  log: FastifyBaseLogger
  metrics: Metrics
}

/**
 * Webhook delivery on this instance, started once an endpoint is enabled: until then each poll is one
 * read (no lock, no write), and neither the dispatcher nor the sender is loaded. An endpoint added later
 * (by the CLI, in another process) is found at the next poll. Each commit that records events wakes the
 * dispatcher at once: this instance's own from the start, other instances' and processes' from when the
 * dispatcher starts (watchRecordedEvents: on PostgreSQL a channel on the instance's one listening
 * connection, which an instance without endpoints opens only for its list pages); its poll is the fallback
 * (retries coming due, leases ending).
 */
export class WebhookDelivery implements BackgroundWork {
  readonly #options: WebhookDeliveryOptions
  readonly #watch: BackgroundLoop
  #dispatcher: WebhookDispatcher | undefined
  #stopped = false
  #unwatch: (() => void) | undefined

  constructor (options: WebhookDeliveryOptions) {
    this.#options = options
    this.#watch = new BackgroundLoop({
      name: 'webhook_endpoints',
      intervalMs: options.settings.pollIntervalMs,
      pass: async () => {
        if (this.#dispatcher === undefined && await options.store.hasEnabledWebhookEndpoints()) await this.#startDispatcher()
        return false
      },
      onError: (error) => { options.log.warn({ err: error }, 'could not look for webhook endpoints; trying again later') },
      metrics: options.metrics
    })
  }

  start (): void {
    this.#watch.start()
    this.#unwatch ??= this.#options.database.eventsRecorded.subscribe(() => { this.wake() })
  }

  /** Looks for work at once instead of at the next poll. */
  wake (): void {
    if (this.#dispatcher === undefined) this.#watch.wake()
    else this.#dispatcher.wake()
  }

  /** Stops looking, then stops the dispatcher (its attempts in flight given their grace) when it was started. */
  async stop (): Promise<void> {
    this.#stopped = true
    this.#unwatch?.()
    await this.#watch.stop()
    await this.#dispatcher?.stop()
  }

  async #startDispatcher (): Promise<void> {
    const [{ WebhookDispatcher }, { WebhookSender }] = await Promise.all([import('./webhook-dispatcher.js'), import('./webhook-sender.js')])
    if (this.#stopped) return
    const { store, settings, clock, log, metrics } = this.#options
    this.#dispatcher = new WebhookDispatcher({ store, sender: new WebhookSender(settings), settings, clock, log, metrics })
    this.#dispatcher.start()
    this.#unwatch?.()
    this.#unwatch = watchRecordedEvents(this.#options.database, () => { this.wake() })
    // from now on the dispatcher polls; this loop's last pass is the one running (stop waits for it, so not awaited here)
    this.#watch.stop().catch(() => {})
  }
}
