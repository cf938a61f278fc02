import type { Metrics } from '../metrics/metrics.js'
import type { CounterSeries, HistogramSeries } from '../metrics/tally.js'

/** The longest {@link BackgroundLoopOptions.stopGraceMs} may be: the shutdown budget (shutdown-budget.ts) counts on it. */
export const MAX_STOP_GRACE_MS = 2_000

/** How a pass ended, as `petstore_background_passes_total` counts it (`aborted`: after stop() aborted its signal). */
export type PassOutcome = 'done' | 'more' | 'failed' | 'aborted'

/** What one loop does and how often; frozen when the loop is made. */
export interface BackgroundLoopOptions {
  /** The `loop` label of its metrics, e.g. `event_retention`. */
  name: string
  /** The fallback poll: a pass every this many ms (± {@link jitter}) whether or not anything woke the loop. */
  intervalMs: number
  /** How far each poll's delay strays either side, as a fraction of it (default 0.1: ±10 %), so instances started together do not poll in step. */
  jitter?: number
  /** Most passes in flight at once (default 1), besides those that gave their slot up (`yieldSlot`). */
  concurrency?: number
  /** How long `stop()` lets the passes in flight finish on their own before it aborts their signal (default 0: at once; at most {@link MAX_STOP_GRACE_MS}). */
  stopGraceMs?: number
  /**
   * One pass of the work. Resolves true when more is waiting (another pass follows at once), false when
   * done until the next poll or wake. `signal` aborts when the loop stops: a pass ends early then,
   * leaving its work to the next instance or start. `yieldSlot` gives the pass's slot to the next pass
   * while this one goes on (it waits on something slow): it no longer counts against `concurrency`, and
   * `stop()` still waits for it.
   */
  pass: (signal: AbortSignal, yieldSlot: () => void) => Promise<boolean>
  /** A pass that failed (never called for a pass cut off by the abort): log it; the loop goes on at its next poll. */
  onError: (error: unknown) => void
  metrics: Pick<Metrics, 'backgroundPasses' | 'backgroundPassDuration'>
}

/**
 * Runs a pass of background work, graphile-worker's way: at {@link start}, on {@link wake}, and on a
 * jittered poll as the fallback; at most `concurrency` passes at once (a pass waiting on something slow
 * may give its slot up), extra wakes merged into one
 * pass; a pass that reports more work is followed by another at once (after other callbacks have
 * had their turn); a failing pass is reported and never stops the loop. {@link stop} starts nothing
 * more and resolves once the passes in flight have ended. Its poll never keeps the process alive.
 */
export class BackgroundLoop {
  readonly #name: string
  readonly #intervalMs: number
  readonly #jitter: number
  readonly #concurrency: number
  readonly #stopGraceMs: number
  readonly #pass: BackgroundLoopOptions['pass']
  readonly #onError: BackgroundLoopOptions['onError']
  readonly #outcomes: Record<PassOutcome, CounterSeries>
  readonly #duration: HistogramSeries
  readonly #abort = new AbortController()
  readonly #inFlight = new Set<Promise<void>>()
  // passes in flight that still hold a slot (none gave it up)
  #holding = 0
  #poll: NodeJS.Timeout | undefined
  #turn: NodeJS.Immediate | undefined
  // a pass is owed (a wake, a poll, a pass that left work) but may wait for a free slot
  #owed = false
  #started = false
  #stopping: Promise<void> | undefined

  constructor (options: BackgroundLoopOptions) {
    this.#name = options.name
    this.#intervalMs = options.intervalMs
    this.#jitter = options.jitter ?? 0.1
    this.#concurrency = options.concurrency ?? 1
    this.#stopGraceMs = options.stopGraceMs ?? 0
    if (!(this.#stopGraceMs >= 0 && this.#stopGraceMs <= MAX_STOP_GRACE_MS)) throw new RangeError(`stopGraceMs of ${this.#name} must be 0 to ${MAX_STOP_GRACE_MS}, got ${this.#stopGraceMs}`)
    if (!(this.#concurrency >= 1)) throw new RangeError(`concurrency of ${this.#name} must be 1 or more, got ${this.#concurrency}`)
    this.#pass = options.pass
    this.#onError = options.onError
    // the series found once: a pass counts into them without a look-up
    const { backgroundPasses, backgroundPassDuration } = options.metrics
    const outcome = (name: PassOutcome): CounterSeries => backgroundPasses.series({ loop: this.#name, outcome: name })
    this.#outcomes = { done: outcome('done'), more: outcome('more'), failed: outcome('failed'), aborted: outcome('aborted') }
    this.#duration = backgroundPassDuration.series({ loop: this.#name })
  }

  /** Runs a first pass at once, then polls; a second call, or one after {@link stop}, does nothing. */
  start (): void {
    if (this.#started || this.#stopping !== undefined) return
    this.#started = true
    this.#schedulePoll()
    this.wake()
  }

  /** Runs a pass at once, or as soon as a slot is free; wakes that come before it has begun make that one pass. Ignored before {@link start} and after {@link stop}. */
  wake (): void {
    if (!this.#started || this.#stopping !== undefined) return
    this.#owed = true
    this.#takeTurn()
  }

  /**
   * Starts no more passes; lets those in flight finish for up to `stopGraceMs`, then aborts their
   * signal; resolves once every one has ended (never rejects). A second call waits for the same stop.
   */
  async stop (): Promise<void> {
    this.#stopping ??= this.#stop()
    await this.#stopping
  }

  async #stop (): Promise<void> {
    clearTimeout(this.#poll)
    clearImmediate(this.#turn)
    this.#owed = false
    const ended = Promise.all(this.#inFlight)
    if (this.#stopGraceMs > 0 && this.#inFlight.size > 0) {
      let grace: NodeJS.Timeout | undefined
      await Promise.race([ended, new Promise((resolve) => { grace = setTimeout(resolve, this.#stopGraceMs) })])
      clearTimeout(grace)
    }
    this.#abort.abort()
    await ended
  }

  #schedulePoll (): void {
    const delayMs = this.#intervalMs * (1 + this.#jitter * (2 * Math.random() - 1))
    this.#poll = setTimeout(() => {
      this.#schedulePoll()
      this.wake()
    }, delayMs).unref()
  }

  /** Starts the owed pass on the event loop's next turn: the caller of wake() never runs a pass in its own stack. */
  #takeTurn (): void {
    this.#turn ??= setImmediate(() => {
      this.#turn = undefined
      if (this.#owed && this.#stopping === undefined && this.#holding < this.#concurrency) {
        this.#owed = false
        this.#run()
      }
    })
  }

  #run (): void {
    const signal = this.#abort.signal
    const started = performance.now()
    let holding = true
    const freeSlot = (): void => {
      if (!holding) return
      holding = false
      this.#holding--
    }
    const yieldSlot = (): void => {
      if (!holding) return
      freeSlot()
      if (this.#owed) this.#takeTurn()
    }
    this.#holding++
    const running = new Promise<boolean>((resolve) => { resolve(this.#pass(signal, yieldSlot)) })
      // a pass that ends once its signal has aborted was cut off, whatever it returns
      .then((more): PassOutcome => signal.aborted ? 'aborted' : more ? 'more' : 'done', (error: unknown): PassOutcome => {
        if (signal.aborted) return 'aborted'
        try {
          this.#onError(error)
        } catch {
          // a failing logger must not turn into an unhandled rejection
        }
        return 'failed'
      })
      .then((outcome) => {
        this.#outcomes[outcome].inc()
        this.#duration.observe((performance.now() - started) / 1000)
        this.#inFlight.delete(running)
        freeSlot()
        if (outcome === 'more') this.#owed = true
        // a wake that came while every slot was busy is owed too
        if (this.#owed) this.#takeTurn()
      })
    this.#inFlight.add(running)
  }
}
