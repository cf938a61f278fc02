// Transaction-scoped advisory locks, one per purpose, keyed also by the schema so that
// two deployments sharing a database in different schemas never wait on each other
const LOCK_CLASS = 0x50530000 // "PS"

/**
 * `changes` is taken by every transaction that records an event (a pet added or changed), before it
 * draws an id, and held until its commit: ids are then drawn in commit order (docs/architecture.md).
 * The numbers are part of the schema's contract: instances of every release must take the same ones.
 */
export const LOCKS = { migrations: LOCK_CLASS + 1, changes: LOCK_CLASS + 2, firstApiKey: LOCK_CLASS + 3 } as const

/** The SQL expression that takes the lock of `purpose` until the transaction ends. */
export const lockSql = (purpose: number): string => `pg_advisory_xact_lock(${purpose}, hashtext(current_schema()))`

/** A statement: those with a name are prepared once per connection, then only bound and executed. */
export interface Statement {
  readonly name?: string
  readonly text: string
}
