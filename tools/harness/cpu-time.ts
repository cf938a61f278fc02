import { readdirSync, readFileSync } from 'node:fs'

/**
 * Nanoseconds the processes `pids` have spent on a CPU so far, over all their threads (the first
 * field of `/proc/<pid>/task/<tid>/schedstat`); undefined where /proc does not say.
 * Threads that have exited no longer count, so read it around a run in which the threads persist.
 */
export function cpuTimeNs (pids: readonly number[]): number | undefined {
  let total = 0
  for (const pid of pids) {
    let tids: string[]
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      return undefined
    }
    for (const tid of tids) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return Number.isFinite(total) ? total : undefined
}
