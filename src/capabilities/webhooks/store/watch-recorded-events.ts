import type { Database } from '../../../infra/database/database.js'
import { CHANNELS } from '../../../infra/database/postgres/channels.js'

// how often SQLite's data_version is read for commits of other processes (the CLI, cluster workers): one
// read of a counter in the connection, no lock, no I/O
const DATA_VERSION_PROBE_MS = 20

/**
 * Calls `wake` as soon as events are committed: on PostgreSQL at each `NOTIFY` of the event-recording
 * transactions (any instance); on SQLite at this process's own commits and when `data_version` shows
 * another process committed. Returns what stops watching.
 */
export function watchRecordedEvents (database: Database, wake: () => void): () => void {
  switch (database.kind) {
    case 'postgres':
      return database.listen(CHANNELS.eventsRecorded).subscribe(wake)
    case 'sqlite': {
      const unsubscribe = database.onCommitted(wake)
      let seen = database.dataVersion()
      const probe = setInterval(() => {
        try {
          const version = database.dataVersion()
          if (version === seen) return
          seen = version
        } catch {
          // a closed or failing database: the poll of the delivery loop reports it
          return
        }
        wake()
      }, DATA_VERSION_PROBE_MS).unref()
      return () => {
        clearInterval(probe)
        unsubscribe()
      }
    }
  }
}
