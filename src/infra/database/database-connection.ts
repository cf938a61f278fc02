import type { CommitSignal } from './commit-signal.js'

/** What migrating did: the schema version afterwards and the migrations applied now. */
export interface MigrationResult {
  version: number
  applied: string[]
}

/**
 * What every engine's database offers besides the capabilities' own stores: the connection's life,
 * its schema and the small settings table. Each capability builds its store on the engine's class.
 */
export interface DatabaseConnection {
  /** Where the data lives, for logs (never credentials). */
  readonly description: string
  /** Raised by a store after it committed events on this instance (webhook delivery wakes on it). */
  readonly eventsRecorded: CommitSignal
  /** Applies pending migrations; returns the schema version afterwards. */
  migrate (): Promise<MigrationResult>
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping (): Promise<void>
  /** Returns the setting, storing `initialValue` first if it is not set yet (atomic across instances). */
  ensureSetting (name: string, initialValue: string): Promise<string>
  /** Runs `close` when the database closes, before its connections do (listeners a store opened). */
  closeWith (close: () => Promise<void>): void
  close (): Promise<void>
}
