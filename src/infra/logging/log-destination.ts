import { writeSync } from 'node:fs'
import pino from 'pino'

/**
 * Bytes of log lines written at once, at most: PIPE_BUF on Linux, the largest write to a pipe that
 * the kernel never interleaves with another process's (with WORKERS=N every worker writes to the one
 * pipe a supervisor or a container runtime reads). A single longer line is written alone.
 */
export const LOG_BATCH_BYTES = 4096

/** Longest a line waits in a batch before it is written, in ms. */
export const LOG_FLUSH_INTERVAL_MS = 250

/**
 * Standard output for log lines, written in batches: a line is gathered with the next ones, and the
 * batch is written before it would exceed {@link LOG_BATCH_BYTES}, or once {@link LOG_FLUSH_INTERVAL_MS}
 * has passed. One write per line cost a request a fifth of its CPU time (docs/performance.md).
 * A batch is written at once, by write(2) (pino's sonic-boom in its synchronous mode, which waits out a
 * full pipe), as Node writes its own stdout to files and pipes on Linux: written asynchronously, one
 * 4 KiB write in flight at a time, the lines of a loaded instance (10 MB/s at 35,000 requests/s) came
 * faster than the writes, and waited in memory, old enough for V8 to promote them (a backlog that
 * grew without bound while the load lasted). A reader slower than the service slows the service
 * instead. Everything gathered is written when the process exits (SIGTERM's drain, `process.exit`, a
 * fatal error) or {@link BatchedStdout.flushSync} is called; a SIGKILL loses at most the last batch
 * (≤ 250 ms or 4 KiB of lines).
 */
export class BatchedStdout {
  // maxWrite: a batch that a full pipe left in part is finished in writes that stay within PIPE_BUF
  readonly #destination = pino.destination({ dest: 1, sync: true, maxWrite: LOG_BATCH_BYTES })
  #lines: string[] = []
  #bytes = 0

  constructor () {
    setInterval(() => { this.#release() }, LOG_FLUSH_INTERVAL_MS).unref()
    process.once('exit', () => { this.flushSync() })
  }

  write (line: string): void {
    const bytes = Buffer.byteLength(line)
    if (this.#bytes + bytes > LOG_BATCH_BYTES) this.#release()
    this.#lines.push(line)
    this.#bytes += bytes
  }

  /**
   * Writes every gathered line now, before returning (for exits that cannot wait), by write(2) itself:
   * an exit waits for a full pipe for at most a second, where sonic-boom would wait as long as it stays full.
   */
  flushSync (): void {
    const batch = this.#take()
    if (batch !== undefined) writeAllSync(batch)
  }

  #release (): void {
    const batch = this.#take()
    if (batch !== undefined) this.#destination.write(batch)
  }

  #take (): string | undefined {
    if (this.#lines.length === 0) return undefined
    const batch = this.#lines.length === 1 ? this.#lines[0] as string : this.#lines.join('')
    this.#lines = []
    this.#bytes = 0
    return batch
  }
}

// a full pipe (EAGAIN) is waited for, 10 ms at a time, for at most a second: an exit must not hang on a reader that stopped
const FULL_PIPE_WAIT_MS = 10
const FULL_PIPE_TRIES = 100

function writeAllSync (text: string): void {
  let rest = Buffer.from(text)
  for (let tries = 0; rest.length > 0 && tries < FULL_PIPE_TRIES;) {
    try {
      rest = rest.subarray(writeSync(1, rest))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
      tries++
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FULL_PIPE_WAIT_MS)
    }
  }
}

let stdout: BatchedStdout | undefined

/** The process's one batched standard output (every app of the process shares it, as they share the file descriptor). */
export function batchedStdout (): BatchedStdout {
  stdout ??= new BatchedStdout()
  return stdout
}
