import { readFileSync } from 'node:fs'

/** The ids of the processes `pid` has started and that still run (Linux: /proc); none once it has exited. */
export function childPids (pid: number | undefined): number[] {
  if (pid === undefined) return []
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((id) => id !== '').map(Number)
  } catch {
    return []
  }
}

/** `pid` and its children: a cluster primary and its workers, or a single process alone. */
export function processTree (pid: number | undefined): number[] {
  return pid === undefined ? [] : [pid, ...childPids(pid)]
}
