/** Something that works in the background between its start and its stop (a loop, a dispatcher). */
export interface BackgroundWork {
  start (): void
  /** Resolves once its work in flight has ended: nothing of it touches the store afterwards. */
  stop (): Promise<void>
}

/**
 * The app's background work: each started as it is added, all stopped together by {@link stopAll},
 * which the app's close runs after HTTP has drained and before the store closes (shutdown-budget.ts).
 */
export class BackgroundWorkers {
  readonly #all: BackgroundWork[] = []
  #stopped = false

  /** Starts `work` (unless {@link stopAll} has run) and has {@link stopAll} stop it; returns it. */
  start<W extends BackgroundWork> (work: W): W {
    this.#all.push(work)
    if (!this.#stopped) work.start()
    return work
  }

  /** Stops every one at once and waits for all of them, even when one fails (then rejects with its error). */
  async stopAll (): Promise<void> {
    this.#stopped = true
    const stopped = await Promise.allSettled(this.#all.map(async (work) => { await work.stop() }))
    const failed = stopped.find((result) => result.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }
}
