import { CommitSignal } from '../../../infra/database/commit-signal.js'
import type { Database } from '../../../infra/database/database.js'
import { wrapStoreCalls } from '../../../infra/runtime/wrap-store.js'
import { raiseWhenEnabled } from './deliveries-due.js'
import type { WebhookDeliveryStore, WebhookEndpointStore, WebhookStore } from './webhook-store.js'
import { PostgresWebhookDeliveryStore } from './postgres-webhook-delivery-store.js'
import { PostgresWebhookEndpointStore } from './postgres-webhook-endpoint-store.js'
import { SqliteWebhookDeliveryStore } from './sqlite-webhook-delivery-store.js'
import { SqliteWebhookEndpointStore } from './sqlite-webhook-endpoint-store.js'

/**
 * The webhook store of `database`'s engine: its endpoints and its delivery queue, each a class of its own, as
 * one object of their methods (bound). Neither engine's module loads a driver (the database loaded its own), so
 * both are imported as they are: no chunk to fetch at start. `deliveriesDue` is raised after an endpoint is enabled
 * again (deliveries-due.ts); a process without a dispatcher (the CLI) leaves it to the one no one hears.
 */
export function createWebhookStore (database: Database, deliveriesDue = new CommitSignal()): WebhookStore {
  const [endpoints, queue]: [WebhookEndpointStore, WebhookDeliveryStore] = database.kind === 'sqlite'
    ? [new SqliteWebhookEndpointStore(database), new SqliteWebhookDeliveryStore(database)]
    : [new PostgresWebhookEndpointStore(database), new PostgresWebhookDeliveryStore(database)]
  const bound = <S extends object>(store: S): S => wrapStoreCalls(store, (call) => call)
  return { ...raiseWhenEnabled(bound(endpoints), deliveriesDue), ...bound(queue) }
}
