import pg from 'pg'
import { StoreUnavailableError } from '../../errors/catalogue.js'

// SQLSTATE classes where the database, not the query, is at fault: the client may retry
// 08 connection, 53 resources, 57 operator intervention (incl. statement timeout), 40 rollbacks,
// 55P03 lock wait, 58 system error, 25006 read-only (a primary turned standby during a failover)
const UNAVAILABLE_SQLSTATE = /^(08|53|57|40|55P03|58|25006)/
// the driver's own failures: no connection, a timed-out connect or query, a closed pool
const UNAVAILABLE_DRIVER_MESSAGE = /timeout|Connection terminated|not queryable|Cannot use a pool after calling end/i

export function isDatabaseError (error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError
}

/** Maps a driver or server failure to {@link StoreUnavailableError} when retrying may help; other errors pass through. */
export function toStoreError (error: unknown): unknown {
  if (isDatabaseError(error)) {
    return typeof error.code === 'string' && UNAVAILABLE_SQLSTATE.test(error.code)
      ? new StoreUnavailableError(`PostgreSQL is unavailable (${error.code}: ${error.message})`, { cause: error })
      : error
  }
  const code = (error as { code?: unknown } | undefined)?.code
  // network and name-resolution errors from node (ECONNREFUSED, ETIMEDOUT, ECONNRESET, EAI_AGAIN…)
  if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) {
    return new StoreUnavailableError(`PostgreSQL is unreachable (${code})`, { cause: error })
  }
  if (error instanceof Error && UNAVAILABLE_DRIVER_MESSAGE.test(error.message)) {
    return new StoreUnavailableError(`PostgreSQL is unavailable (${error.message})`, { cause: error })
  }
  return error
}
