import { readdirSync, readFileSync } from 'node:fs'

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

/**
 * `pid`'s children, their children and so on (Linux: /proc), children of every thread included: the
 * whole tree at this moment, so that it can be killed before the orphans are handed to init.
 */
export function descendantPids (pid: number): number[] {
  const found: number[] = []
  const queue = [pid]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    let threads: string[]
    try {
      threads = readdirSync(`/proc/${next}/task`)
    } catch {
      continue
    }
    for (const thread of threads) {
      let children: string
      try {
        children = readFileSync(`/proc/${next}/task/${thread}/children`, 'utf8')
      } catch {
        continue
      }
      for (const child of children.trim().split(/\s+/).filter((id) => id !== '').map(Number)) {
        if (!found.includes(child)) {
          found.push(child)
          queue.push(child)
        }
      }
    }
  }
  return found
}
