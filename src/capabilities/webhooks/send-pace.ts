import { setTimeout as sleep } from 'node:timers/promises'

/** The window an endpoint's `rateLimit` counts in: at most `rateLimit` sends start in any this long (half-open). */
export const RATE_WINDOW_MS = 1_000
/**
 * What the spacing of a rate-limited endpoint's sends adds to each window, for the receiver's sake: a request
 * reaches it a little sooner or later than it was sent (a new connection, a busy loop on either side), and
 * `rateLimit` + 1 of them, started a window apart, would otherwise arrive within one.
 */
export const RATE_TRANSIT_MARGIN_MS = 25

/**
 * The least time between the starts of two sends to an endpoint limited to `rateLimit` a second: starts this far
 * apart put at most `rateLimit` in any {@link RATE_WINDOW_MS} (even as the receiver sees them, within
 * {@link RATE_TRANSIT_MARGIN_MS} of transit jitter), evenly spaced rather than in a burst, so a slow receiver is
 * never sent more at once than one.
 */
export function sendSpacingMs (rateLimit: number): number {
  return (RATE_WINDOW_MS + RATE_TRANSIT_MARGIN_MS) / rateLimit
}

/**
 * Resolves once `performance.now()` reaches `at`, or when `signal` aborts. A timer may fire up to a millisecond
 * before its time as `performance.now()` reads it (timers count in whole milliseconds of the loop's time), so the
 * time is read again after each: a send never starts before its time.
 */
export async function sleepUntil (at: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && performance.now() < at) {
    await sleep(Math.max(1, Math.ceil(at - performance.now())), undefined, { signal }).catch(() => {})
  }
}

/**
 * The wall-clock time (`Date`, whole ms) at or after the monotonic time `at` (`performance.now()`), `readWallClock`
 * giving the wall clock now: what a lease is given back until, so that another instance, reading the wall clock,
 * never takes the endpoint before its next send's time. Rounded up, plus a millisecond for the fraction the wall
 * clock's whole milliseconds leave out. The monotonic time is read first: time passing before the wall clock is read
 * (the process preempted on a loaded machine) then only makes the answer later, never early.
 */
export function wallTimeOf (at: number, readWallClock: () => number): number {
  const wait = at - performance.now()
  const now = readWallClock()
  return wait <= 0 ? now : now + Math.ceil(wait) + 1
}
