import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
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

// the size of bigOrder's event, at least
const BIG_EVENT_BYTES = 10_000

/** The most a socket's buffers (its sender's and its receiver's, at the kernel's largest) can hold on this machine, in bytes. */
function socketBuffersMax (): number {
  // the third of tcp_rmem / tcp_wmem is the most autotuning grows a buffer to (32 MiB and 4 MiB here)
  const largest = (name: string, otherwise: number): number => {
    try {
      return Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]) || otherwise
    } catch {
      return otherwise
    }
  }
  return largest('tcp_rmem', 32 * 2 ** 20) + largest('tcp_wmem', 4 * 2 ** 20)
}

/**
 * How many copies of bigOrder's event make a backlog that a consumer who has read from its socket cannot take
 * in whole without asking for more: past what the socket's buffers may hold once the receiver's has grown, by a
 * half, in hundreds (insertCopies' batches). A consumer that never read keeps a small buffer; one that read even a
 * little lets the kernel grow it to tcp_rmem's largest, and 2,000 copies (20 MB) once all fit.
 */
export function copiesBeyondSocketBuffers (): number {
  return Math.ceil(socketBuffersMax() * 1.5 / BIG_EVENT_BYTES / 100) * 100
}
