/** The buses a relay may publish to: one row each in `bus_positions`. */
export type BusName = 'nats' | 'rabbitmq'

/** What a relay's pass reads before deciding to publish: no lock, no write. */
export interface BusLease {
  /** Every event up to this id was acknowledged by the broker. */
  publishedThrough: number
  /** The highest event id handed to the broker so far, by any instance of the deployment. */
  attemptedThrough: number
  leaseToken: string | undefined
  /** The instance (`host:pid`) that holds or last held the lease. */
  leaseHolder: string | undefined
  /** Milliseconds since the epoch. */
  leaseUntil: number | undefined
  /** When the oldest event above `publishedThrough` was committed (ms since the epoch); undefined when none waits. */
  oldestWaitingAt: number | undefined
}

/** A bus as `petstore buses` and the metrics show it. */
export interface BusStatus {
  bus: BusName
  publishedThrough: number
  /** When the position last moved. */
  publishedAt: Date | undefined
  /** The instance (`host:pid`) that holds the lease, while it holds it. */
  publisher: string | undefined
  leaseUntil: Date | undefined
  lastError: string | undefined
  lastErrorAt: Date | undefined
  /** The newest event recorded (0: none). */
  newestEventId: number
  /** Events above the position, counted up to {@link WAITING_COUNT_LIMIT}. */
  waitingEvents: number
  /** When the oldest event not yet published was committed; undefined when none waits. */
  oldestWaitingAt: Date | undefined
}

/** Waiting events are counted up to this many: a count over a longer backlog would cost more than it tells. */
export const WAITING_COUNT_LIMIT = 1_000_000

/** Ends every lease of a restored copy (`restore`): no instance of it is publishing. */
export const RELEASE_HELD_BUS_LEASES_SQLITE = 'UPDATE bus_positions SET lease_token = NULL, lease_holder = NULL, lease_until = NULL WHERE lease_token IS NOT NULL'

/**
 * Each bus's position in the change feed and the lease of the one instance publishing it (graphile-worker's
 * shape: the position lives in the store, every write under a lease names its token, so an instance whose
 * lease was taken over writes nothing). Times are milliseconds since the epoch, from the caller's clock.
 */
export interface BusPositionStore {
  /** Creates the bus's row, positioned at the newest event, unless it exists. */
  ensureBus (bus: BusName): Promise<void>
  findBus (bus: BusName): Promise<BusLease | undefined>
  /**
   * Takes the lease (when it is free, ended, or already `token`'s) until `now + leaseMs`, if the position is still
   * `position`, and records that the events up to `through` are being handed to the broker; the lease's end (the
   * batch must end before it), or undefined when another instance holds the lease or the position moved.
   */
  beginBatch (bus: BusName, token: string, holder: string, position: number, through: number, now: number, leaseMs: number): Promise<number | undefined>
  /** Moves the position to `through` (the broker acknowledged), renews the lease and clears the last error; false when the lease was lost. */
  advanceBus (bus: BusName, token: string, through: number, now: number, leaseMs: number): Promise<boolean>
  /** Records why publishing failed, under the lease. */
  recordBusFailure (bus: BusName, token: string, message: string, now: number): Promise<void>
  /** Gives the lease back (at stop): another instance takes the bus at once. */
  releaseBus (bus: BusName, token: string, now: number): Promise<void>
  /** Every bus with a row, with its lag, read at `now` (a lease ended before it shows no publisher). */
  listBuses (now: number): Promise<BusStatus[]>
}
