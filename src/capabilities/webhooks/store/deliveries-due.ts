import type { CommitSignal } from '../../../infra/database/commit-signal.js'
import type { Database } from '../../../infra/database/database.js'
import type { WebhookDeliveryLog } from './webhook-delivery-log.js'
import type { WebhookEndpointStore } from './webhook-store.js'

/**
 * The PostgreSQL channel a commit notifies (payload: its schema) when it makes deliveries due without recording an
 * event: an endpoint enabled again, an event resent, deliveries recovered or requeued. Webhooks' own: the stream's
 * tail and the buses, which wake on the events channel, are not woken for it.
 */
export const DELIVERIES_DUE_CHANNEL = 'petstore_webhook_deliveries_due'
/** The notification as an SQL expression, delivered at the commit of the statement or transaction it runs in. */
export const NOTIFY_DELIVERIES_DUE = `pg_notify('${DELIVERIES_DUE_CHANNEL}', current_schema())`

/**
 * Calls `onDue` when deliveries may have become due outside the schedule: at once after this instance's own such
 * commits (`due`, which the stores raise), and on PostgreSQL at other instances' and processes' (`LISTEN` on the
 * instance's one listening connection). On SQLite, another process's commits are seen by the `data_version` probe
 * of `watchRecordedEvents`, which moves with any commit. Returns what stops it.
 */
export function watchDeliveriesDue (database: Database, due: CommitSignal, onDue: () => void): () => void {
  const own = due.subscribe(onDue)
  if (database.kind === 'sqlite') return own
  const others = database.listen(DELIVERIES_DUE_CHANNEL).subscribe(onDue)
  return () => { own(); others() }
}

/**
 * `endpoints` (its methods bound), raising `due` once a change that enabled an endpoint again has committed: its
 * waiting deliveries are due at once. Written once for both engines; each engine's statement notifies the channel.
 */
export function raiseWhenEnabled (endpoints: WebhookEndpointStore, due: CommitSignal): WebhookEndpointStore {
  return {
    ...endpoints,
    updateWebhookEndpoint: async (id, change, now, precondition) => {
      const changed = await endpoints.updateWebhookEndpoint(id, change, now, precondition)
      if (change.enabled === true && changed.outcome === 'changed' && changed.before.disabledAt !== null) due.raise()
      return changed
    }
  }
}

/** `log` (its methods bound), raising `due` once a requeue, a resend or a recovery that queued deliveries has committed. */
export function raiseWhenRequeued (log: WebhookDeliveryLog, due: CommitSignal): WebhookDeliveryLog {
  return {
    ...log,
    requeueGivenUpWebhookDeliveries: async (endpointId) => {
      const requeued = await log.requeueGivenUpWebhookDeliveries(endpointId)
      if (requeued !== undefined && requeued.requeued > 0) due.raise()
      return requeued
    },
    resendWebhookEvent: async (endpointId, eventId) => {
      const resent = await log.resendWebhookEvent(endpointId, eventId)
      if (resent.outcome === 'queued') due.raise()
      return resent
    },
    recoverWebhookDeliveries: async (endpointId, since, until) => {
      const recovered = await log.recoverWebhookDeliveries(endpointId, since, until)
      if (recovered.outcome === 'queued' && recovered.queued > 0) due.raise()
      return recovered
    }
  }
}
