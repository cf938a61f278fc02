import { readFileSync } from 'node:fs'
import type { TestEvent } from 'node:test/reporters'
import { descendantPids } from '../../tools/harness/process-tree.js'

/** What the runner knows of one test file's process, from node:test's events. */
interface FileState {
  /** When its process started (node:test dequeued the file's own test), in `performance.now()` time. */
  start: number
  /** When it ended (the file's own test completed). */
  end?: number
  /** Its top-level tests and suites dequeued and not yet completed, by name and place. */
  readonly running: Map<string, number>
  /** Since when every top-level test it started has completed; undefined while one runs or before the first ends. */
  doneSince?: number
  /** When the runner killed it, and why. */
  killed?: { at: number, reason: string }
}

/** A file whose process the runner is to kill, and why, in words. */
export interface Hang {
  readonly file: string
  readonly reason: string
}

interface ReportedTest {
  name: string
  nesting: number
  file?: string
  entryFile?: string
  line?: number
  column?: number
}

/**
 * Which test files' processes hang, from the events node:test's `run()` emits: a file whose top-level
 * tests have all completed (passed, failed or timed out) and whose process has not exited `exitGraceMs`
 * later (a timer, a socket or a server left open; a hook that never returns), and a file whose process
 * still runs `fileTimeoutMs` after it started (a test that spins, a hang outside any test). Also keeps each
 * file's span, for the run's timings.
 *
 * Only Node 22 and later name the file a child's event comes from (`entryFile`); Node 20's events name the
 * file that defined the test, and hold back a file's events while another reports, so there only the
 * file limit applies (Node 20's `forceExit` ends a file's process once its tests are done).
 */
export class HangWatch {
  readonly #files = new Map<string, FileState>()

  constructor (private readonly limits: { readonly exitGraceMs: number, readonly fileTimeoutMs: number }) {}

  /** Takes one event of the run, at `now` (`performance.now()` time). */
  add (event: TestEvent, now: number): void {
    if (event.type !== 'test:dequeue' && event.type !== 'test:complete') return
    const data = event.data as unknown as ReportedTest
    if (data.nesting !== 0) return
    if (data.entryFile === undefined) {
      // a file's own test, named after its path: its process starts and ends
      if (data.file === undefined || data.file !== data.name) return
      if (event.type === 'test:dequeue') this.#files.set(data.file, { start: now, running: new Map() })
      else this.#stateOf(data.file, now).end = now
      return
    }
    const state = this.#stateOf(data.entryFile, now)
    const test = `${data.name}\0${data.line ?? ''}:${data.column ?? ''}`
    const count = state.running.get(test) ?? 0
    if (event.type === 'test:dequeue') {
      state.running.set(test, count + 1)
      state.doneSince = undefined
      return
    }
    if (count <= 1) state.running.delete(test)
    else state.running.set(test, count - 1)
    if (state.running.size === 0) state.doneSince = now
  }

  /** The files to kill at `now`, each named once. */
  due (now: number): Hang[] {
    const hangs: Hang[] = []
    for (const [file, state] of this.#files) {
      if (state.end !== undefined || state.killed !== undefined) continue
      let reason: string | undefined
      if (state.doneSince !== undefined && now - state.doneSince >= this.limits.exitGraceMs) {
        reason = `its tests were done ${seconds(now - state.doneSince)} s ago and its process had not exited`
      } else if (now - state.start >= this.limits.fileTimeoutMs) {
        reason = `still running ${seconds(now - state.start)} s after it started`
      }
      if (reason === undefined) continue
      state.killed = { at: now, reason }
      hangs.push({ file, reason })
    }
    return hangs
  }

  /** Files killed at least `exitGraceMs` before `now` whose process has still not ended. */
  outlivedKill (now: number): string[] {
    return [...this.#files].filter(([, state]) => state.end === undefined && state.killed !== undefined &&
      now - state.killed.at >= this.limits.exitGraceMs).map(([file]) => file)
  }

  /** Each file's time from its process's start to its end (or to `now`), in ms. */
  spans (now: number): Array<[file: string, ms: number]> {
    return [...this.#files].map(([file, { start, end }]) => [file, (end ?? now) - start])
  }

  #stateOf (file: string, now: number): FileState {
    const state = this.#files.get(file) ?? { start: now, running: new Map() }
    this.#files.set(file, state)
    return state
  }
}

const seconds = (ms: number): string => (ms / 1000).toFixed(0)

/**
 * Kills the process running the test file `file` (an absolute path, its last argument) among this process's
 * children, and every process it started, with SIGKILL (Linux: /proc). Returns how many were signalled.
 */
export function killTestFileProcess (file: string): number {
  const pid = descendantPids(process.pid).find((candidate) => {
    try {
      return readFileSync(`/proc/${candidate}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '').at(-1) === file
    } catch {
      return false
    }
  })
  if (pid === undefined) return 0
  // the whole tree first: a child of a killed process would be handed to init and live on
  const tree = [pid, ...descendantPids(pid)]
  let killed = 0
  for (const member of tree) {
    try {
      process.kill(member, 'SIGKILL')
      killed++
    } catch {
      // it exited meanwhile
    }
  }
  return killed
}
