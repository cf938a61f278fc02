import { readFileSync } from 'node:fs'

/** Resident memory of the processes `pids` together, in bytes (VmRSS from /proc); undefined where /proc does not say. */
export function rssBytes (pids: readonly number[]): number | undefined {
  let total = 0
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      if (match === null) return undefined
      total += Number(match[1]) * 1024
    } catch {
      return undefined
    }
  }
  return pids.length === 0 ? undefined : total
}

/** One reading: ms since the sampler started, and the resident bytes then. */
export interface RssSample {
  atMs: number
  rss: number
}

/**
 * Samples the resident memory of a process (and its children, read afresh each time through
 * `pids`) every `intervalMs` from construction until {@link RssSampler.stop}.
 */
export class RssSampler {
  readonly samples: RssSample[] = []
  readonly #pids: () => readonly number[]
  readonly #startedAt = Date.now()
  readonly #timer: NodeJS.Timeout

  constructor (pids: () => readonly number[], intervalMs = 250) {
    this.#pids = pids
    this.#sample()
    this.#timer = setInterval(() => { this.#sample() }, intervalMs)
  }

  /** The largest sample so far, in bytes. */
  get maxBytes (): number | undefined {
    return this.samples.length === 0 ? undefined : Math.max(...this.samples.map((sample) => sample.rss))
  }

  /** Stops after one last sample: the figure at the end. */
  stop (): RssSample[] {
    clearInterval(this.#timer)
    this.#sample()
    return this.samples
  }

  #sample (): void {
    const rss = rssBytes(this.#pids())
    if (rss !== undefined) this.samples.push({ atMs: Date.now() - this.#startedAt, rss })
  }
}
