import type { Database } from './database.js'
import { EVENTS_RECORDED_CHANNEL } from './commit-signal.js'

/** On SQLite, how often `PRAGMA data_version` is read for commits of other processes (workers, the CLI): a read of a counter, no lock. */
export const DATA_VERSION_PROBE_MS = 50

/**
 * Calls `onEvents` whenever events may have been recorded: at once after this instance's own commits
 * (the database's signal); for other instances and processes, on PostgreSQL at their commit (`LISTEN` on the
 * connection the instance already listens on for changes, and each time it listens again), on SQLite within {@link DATA_VERSION_PROBE_MS} (any other connection's
 * commit moves `data_version`). Nothing here writes. Returns what stops it.
 */
export function watchRecordedEvents (database: Database, onEvents: () => void): () => void {
  const own = database.eventsRecorded.subscribe(onEvents)
  if (database.kind === 'postgres') {
    const others = database.listen(EVENTS_RECORDED_CHANNEL).subscribe(onEvents)
    return () => { own(); others() }
  }
  const connection = database.connection
  const dataVersion = connection.prepare('PRAGMA data_version').pluck()
  let seen: unknown
  const probe = setInterval(() => {
    try {
      if (!connection.open) return
      const version = dataVersion.get()
      if (version !== seen) {
        seen = version
        onEvents()
      }
    } catch {
      // the database is closing or failing: the dispatcher's own look finds out and says so
    }
  }, DATA_VERSION_PROBE_MS).unref()
  return () => { own(); clearInterval(probe) }
}
