import { StoreUnavailableError } from '../../errors/catalogue.js'

// failures of the engine or the disk rather than of the query: the client may retry
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|NOMEM|READONLY|PROTOCOL)/

/** Maps an engine or disk failure (or a closed database) to {@link StoreUnavailableError}; other errors pass through. */
export function toStoreError (error: unknown, open: boolean): unknown {
  const code = (error as { code?: unknown }).code
  if (!open) return new StoreUnavailableError('the SQLite database is closed', { cause: error })
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`SQLite is unavailable (${code})`, { cause: error })
  }
  return error
}

/** SQLite refused a lock at once (`SQLITE_BUSY` and its extended codes, e.g. `SQLITE_BUSY_SNAPSHOT`): another connection holds it, or committed since this transaction read. */
export function isSqliteBusy (error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}
