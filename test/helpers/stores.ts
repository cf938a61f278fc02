import type { TestContext } from 'node:test'
import { createEventStore } from '../../src/capabilities/events/store/create-event-store.js'
import type { EventStore } from '../../src/capabilities/events/store/event-store.js'
import { createIdempotencyStore } from '../../src/capabilities/idempotency/store/create-idempotency-store.js'
import type { IdempotencyStore } from '../../src/capabilities/idempotency/store/idempotency-store.js'
import { createKeyStore } from '../../src/capabilities/keys/store/create-key-store.js'
import type { KeyStore } from '../../src/capabilities/keys/store/key-store.js'
import { createOrderStore } from '../../src/capabilities/orders/store/create-order-store.js'
import type { OrderStore } from '../../src/capabilities/orders/store/order-store.js'
import { createPetStore } from '../../src/capabilities/pets/store/create-pet-store.js'
import type { PetStore } from '../../src/capabilities/pets/store/pet-store.js'
import { createWebhookStore } from '../../src/capabilities/webhooks/store/create-webhook-store.js'
import type { WebhookStore } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { loadConfig } from '../../src/infra/config/config.js'
import type { Database, MigrationResult } from '../../src/infra/database/database.js'
import { openDatabase } from '../../src/infra/database/open-database.js'
import { systemClock } from '../../src/infra/runtime/clock.js'
import { freshDatabaseUrl, type StoreKind } from './databases.js'

/** One opened database with every capability's store on it, as the app builds them (without the app). */
export interface OpenedStores {
  database: Database
  migration: MigrationResult
  databaseUrl: string
  pets: PetStore
  keys: KeyStore
  idempotency: IdempotencyStore
  events: EventStore
  orders: OrderStore
  webhooks: WebhookStore
}

/** Opens (and migrates) the database `url` names, or a fresh one of `kind`, with every store on it; closed when the test ends. */
export async function openStores (t: TestContext, kind: StoreKind, databaseUrl?: string): Promise<OpenedStores> {
  const url = databaseUrl ?? await freshDatabaseUrl(t, kind)
  const { database, migration } = await openDatabase(loadConfig({ DATABASE_URL: url }).database)
  t.after(() => database.close())
  return {
    database,
    migration,
    databaseUrl: url,
    pets: createPetStore(database, systemClock),
    keys: createKeyStore(database, systemClock),
    idempotency: createIdempotencyStore(database),
    events: createEventStore(database),
    orders: createOrderStore(database, systemClock),
    webhooks: createWebhookStore(database)
  }
}
