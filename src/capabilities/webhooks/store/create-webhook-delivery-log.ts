import { CommitSignal } from '../../../infra/database/commit-signal.js'
import type { Database } from '../../../infra/database/database.js'
import { wrapStoreCalls } from '../../../infra/runtime/wrap-store.js'
import { raiseWhenRequeued } from './deliveries-due.js'
import { PostgresWebhookDeliveryLog } from './postgres-webhook-delivery-log.js'
import { SqliteWebhookDeliveryLog } from './sqlite-webhook-delivery-log.js'
import type { WebhookDeliveryLog } from './webhook-delivery-log.js'

/**
 * The webhook delivery log of `database`'s engine (neither engine's module loads a driver). `deliveriesDue` is raised
 * after a resend, a recovery or a requeue (deliveries-due.ts); a process without a dispatcher (the CLI) leaves it to
 * the one no one hears.
 */
export function createWebhookDeliveryLog (database: Database, deliveriesDue = new CommitSignal()): WebhookDeliveryLog {
  const log = database.kind === 'sqlite' ? new SqliteWebhookDeliveryLog(database) : new PostgresWebhookDeliveryLog(database)
  return raiseWhenRequeued(wrapStoreCalls(log, (call) => call), deliveriesDue)
}
