import type { Database } from '../../../infra/database/database.js'
import { PostgresWebhookDeliveryLog } from './postgres-webhook-delivery-log.js'
import { SqliteWebhookDeliveryLog } from './sqlite-webhook-delivery-log.js'
import type { WebhookDeliveryLog } from './webhook-delivery-log.js'

/** The webhook delivery log of `database`'s engine (neither engine's module loads a driver). */
export function createWebhookDeliveryLog (database: Database): WebhookDeliveryLog {
  switch (database.kind) {
    case 'sqlite': return new SqliteWebhookDeliveryLog(database)
    case 'postgres': return new PostgresWebhookDeliveryLog(database)
  }
}
