import pino from 'pino'

/** Characters of log lines gathered before they are handed to the file descriptor in one write. */
export const LOG_BATCH_CHARACTERS = 32 * 1024

/** Longest a line waits in a batch before it is written, in ms. */
export const LOG_FLUSH_INTERVAL_MS = 250

/**
 * Standard output for log lines, written in batches: a line is gathered with the next ones and the
 * batch goes to pino's own destination (sonic-boom, asynchronous, which keeps lines in order and retries
 * a full pipe) once {@link LOG_BATCH_CHARACTERS} are gathered or {@link LOG_FLUSH_INTERVAL_MS} has passed.
 * One write per line cost a request a fifth of its CPU time (docs/performance.md). Everything gathered is
 * written synchronously when the process exits (SIGTERM's drain, `process.exit`, a fatal error) or
 * {@link BatchedStdout.flushSync} is called; a SIGKILL loses at most the last batch (≤ 250 ms or 32 K characters of lines).
 */
export class BatchedStdout {
  // one write per batch: sonic-boom would cut a batch into 16 KiB writes by default
  readonly #destination = pino.destination({ dest: 1, sync: false, maxWrite: 2 * LOG_BATCH_CHARACTERS })
  #lines: string[] = []
  #characters = 0

  constructor () {
    setInterval(() => { this.#release() }, LOG_FLUSH_INTERVAL_MS).unref()
    process.once('exit', () => { this.flushSync() })
  }

  write (line: string): void {
    this.#lines.push(line)
    this.#characters += line.length
    if (this.#characters >= LOG_BATCH_CHARACTERS) this.#release()
  }

  /** Writes every gathered line now, before returning (for exits that cannot wait). */
  flushSync (): void {
    this.#release()
    try {
      this.#destination.flushSync()
    } catch {
      // not open yet, or stdout is gone: nothing more can be written
    }
  }

  #release (): void {
    if (this.#lines.length === 0) return
    const batch = this.#lines.length === 1 ? this.#lines[0] as string : this.#lines.join('')
    this.#lines = []
    this.#characters = 0
    this.#destination.write(batch)
  }
}

let stdout: BatchedStdout | undefined

/** The process's one batched standard output (every app of the process shares it, as they share the file descriptor). */
export function batchedStdout (): BatchedStdout {
  stdout ??= new BatchedStdout()
  return stdout
}
