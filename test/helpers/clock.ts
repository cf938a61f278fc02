/** A clock the test moves by hand (the app's `clock` option). */
export interface ManualClock {
  now: () => number
  advance: (ms: number) => void
}

export function manualClock (start = Date.now()): ManualClock {
  let time = start
  return { now: () => time, advance: (ms) => { time += ms } }
}
