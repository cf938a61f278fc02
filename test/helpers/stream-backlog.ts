import assert from 'node:assert/strict'
import { createdPet, type TestApp } from './build-app.js'
import { execSql } from './databases.js'

// What a stream's backlog is made of in the tests: events large enough (about 10 KiB) that a few hundred pass what
// the kernel's socket buffers hold on loopback, written fast.

/** `count` more events, copies of the newest one (its type, time and data), written straight into the store by another connection, then announced as the writer announces them. */
export async function insertCopies (api: TestApp, count: number): Promise<void> {
  const sqlite = api.databaseUrl.startsWith('sqlite:')
  await execSql(api.databaseUrl, sqlite
    ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) INSERT INTO events (type, occurred_at, data) SELECT type, occurred_at, data FROM n, (SELECT * FROM events ORDER BY id DESC LIMIT 1)`
    : `INSERT INTO events (type, occurred_at, data) SELECT type, occurred_at, data FROM generate_series(1, ${count}), (SELECT * FROM events ORDER BY id DESC LIMIT 1) AS newest`)
  // SQLite's other connections are seen by PRAGMA data_version; PostgreSQL's by the channel the outbox writer notifies
  if (!sqlite) await execSql(api.databaseUrl, "SELECT pg_notify('petstore_events_recorded', current_schema())")
}

/** A pet and an order of it with 20 metadata values of 500 characters: an order.created event of about 10 KiB, the newest. */
export async function bigOrder (api: TestApp): Promise<void> {
  const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
  const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, 'x'.repeat(500)]))
  const order = await api.app.inject({ method: 'POST', url: '/v1/store/orders', headers: { ...api.auth, 'content-type': 'application/json' }, payload: { petId: pet.id, metadata } })
  assert.equal(order.statusCode, 201, order.body)
}
