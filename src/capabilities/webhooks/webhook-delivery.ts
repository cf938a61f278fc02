import { BackgroundLoop } from '../../infra/background/background-loop.js'
import type { BackgroundWork } from '../../infra/background/background-work.js'
import type { Database } from '../../infra/database/database.js'
import type { CommitSignal } from '../../infra/database/commit-signal.js'
import { watchRecordedEvents } from '../../infra/database/watch-recorded-events.js'
import { watchDeliveriesDue } from './store/deliveries-due.js'
import type { WebhookStore } from './store/webhook-store.js'
import type { DispatcherOptions, WebhookDispatcher } from './webhook-dispatcher.js'

/** What the dispatcher is given (the sender aside, made with it), and what wakes it. */
export interface WebhookDeliveryOptions extends Omit<DispatcherOptions, 'store' | 'sender'> {
  store: WebhookStore
  /** Whose commits wake delivery: this instance's at once, others' once the dispatcher runs (watchRecordedEvents). */
  database: Database
  /** Raised by this instance's stores when deliveries become due without an event recorded (an endpoint enabled, a resend). */
  deliveriesDue: CommitSignal
}

/**
 * Webhook delivery on this instance, started once an endpoint is enabled: until then each poll is one
 * read (no lock, no write), and neither the dispatcher nor the sender is loaded. An endpoint added later
 * (by the CLI, in another process) is found at the next poll. Each commit that records events, or that makes
 * deliveries due without one (an endpoint enabled again, a resend, a recovery, a requeue: deliveries-due.ts), wakes
 * the dispatcher at once: this instance's own from the start, other instances' and processes' from when the
 * dispatcher starts (watchRecordedEvents, watchDeliveriesDue: on PostgreSQL channels on the instance's one listening
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
    if (this.#unwatch !== undefined) return
    const { database, deliveriesDue } = this.#options
    const recorded = database.eventsRecorded.subscribe(() => { this.wake() })
    const due = deliveriesDue.subscribe(() => { this.wake() })
    this.#unwatch = () => { recorded(); due() }
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
    const { database, deliveriesDue, ...options } = this.#options
    this.#dispatcher = new WebhookDispatcher({ ...options, sender: new WebhookSender(options.settings) })
    this.#dispatcher.start()
    this.#unwatch?.()
    const recorded = watchRecordedEvents(database, () => { this.wake() })
    const due = watchDeliveriesDue(database, deliveriesDue, () => { this.wake() })
    this.#unwatch = () => { recorded(); due() }
    // from now on the dispatcher polls; this loop's last pass is the one running (stop waits for it, so not awaited here)
    this.#watch.stop().catch(() => {})
  }
}
