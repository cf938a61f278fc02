/** The time source of the app; tests inject one to move past dates such as a sunset or a window's end. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now (): number
}

/** The real time. */
export const systemClock: Clock = { now: () => Date.now() }
