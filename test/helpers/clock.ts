import type { TestContext } from 'node:test'

/** A clock the test moves by hand (the app's `clock` option). */
export interface ManualClock {
  now: () => number
  advance: (ms: number) => void
}

export function manualClock (start = Date.now()): ManualClock {
  let time = start
  return { now: () => time, advance: (ms) => { time += ms } }
}

/**
 * Mocks `Date` (what libraries that read the time themselves, like @fastify/rate-limit, see) from
 * `now` on, for the rest of the test; move it with `t.mock.timers.tick(ms)`. node:test's MockTimers
 * print an ExperimentalWarning on Node 20 (they are stable from Node 23.1): it says nothing about this
 * service, so that one warning is dropped; every other warning still reaches Node.
 */
export function mockDate (t: TestContext, now = Date.now()): void {
  const emitWarning = process.emitWarning.bind(process)
  const filtered = t.mock.method(process, 'emitWarning', (warning: string | Error, ...rest: unknown[]) => {
    if (!String(warning instanceof Error ? warning.message : warning).includes('MockTimers')) Reflect.apply(emitWarning, undefined, [warning, ...rest])
  })
  try {
    t.mock.timers.enable({ apis: ['Date'], now })
  } finally {
    filtered.mock.restore()
  }
}
