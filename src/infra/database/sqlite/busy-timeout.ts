/** How long SQLite waits for another connection's write lock before the request gets a 503. */
export const SQLITE_BUSY_TIMEOUT_MS = 250
