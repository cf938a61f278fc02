import type { BusLease, BusName, BusStatus } from './bus-position-store.js'

/** A `bus_positions` row with its lag, as {@link BusStatus} is read from it (both engines: times as ms, ids as numbers). */
export interface BusStatusRow {
  bus: BusName
  published_through: number
  published_at: number | null
  lease_holder: string | null
  lease_until: number | null
  last_error: string | null
  last_error_at: number | null
  newest_event_id: number | null
  waiting_events: number
  oldest_waiting_at: number | Date | null
}

const dateOf = (value: number | Date | null): Date | undefined => value === null ? undefined : new Date(value)

export function rowToBusStatus (row: BusStatusRow, now: number): BusStatus {
  const held = row.lease_until !== null && row.lease_until > now
  return {
    bus: row.bus,
    publishedThrough: row.published_through,
    publishedAt: dateOf(row.published_at),
    publisher: held ? row.lease_holder ?? undefined : undefined,
    leaseUntil: held ? dateOf(row.lease_until) : undefined,
    lastError: row.last_error ?? undefined,
    lastErrorAt: dateOf(row.last_error_at),
    newestEventId: row.newest_event_id ?? 0,
    waitingEvents: row.waiting_events,
    oldestWaitingAt: dateOf(row.oldest_waiting_at)
  }
}

/** A `bus_positions` row as a relay's pass reads it (both engines). */
export interface BusLeaseRow {
  published_through: number
  attempted_through: number
  lease_token: string | null
  lease_holder: string | null
  lease_until: number | null
  oldest_waiting_at: number | Date | null
}

export function rowToBusLease (row: BusLeaseRow): BusLease {
  return {
    publishedThrough: row.published_through,
    attemptedThrough: row.attempted_through,
    leaseToken: row.lease_token ?? undefined,
    leaseHolder: row.lease_holder ?? undefined,
    leaseUntil: row.lease_until ?? undefined,
    oldestWaitingAt: row.oldest_waiting_at === null ? undefined : row.oldest_waiting_at instanceof Date ? row.oldest_waiting_at.getTime() : row.oldest_waiting_at
  }
}
