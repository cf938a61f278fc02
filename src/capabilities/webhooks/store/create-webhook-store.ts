import type { Database } from '../../../infra/database/database.js'
import type { WebhookStore } from './webhook-store.js'
import { PostgresWebhookStore } from './postgres-webhook-store.js'
import { SqliteWebhookStore } from './sqlite-webhook-store.js'

/**
 * The webhook store of `database`'s engine. Neither engine's module loads a driver (the database loaded its
 * own), so both are imported as they are: no chunk to fetch at start.
 */
export function createWebhookStore (database: Database): WebhookStore {
  switch (database.kind) {
    case 'sqlite': return new SqliteWebhookStore(database)
    case 'postgres': return new PostgresWebhookStore(database)
  }
}
