import type { ChildProcess } from 'node:child_process'

/** How a process ended: its exit code, or the signal that ended it. */
export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** Resolves once `child` has exited and its output is drained. */
export function exitOf (child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
      return
    }
    child.once('close', (code, signal) => { resolve({ code, signal }) })
  })
}
