import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RATE_WINDOW_MS, sendSpacingMs, sleepUntil, wallTimeOf } from '../../src/capabilities/webhooks/send-pace.js'

// The rate limit's clockwork, alone: what the dispatcher's spacing rests on

test('When sends start a spacing apart, then no window of a second holds more than the rate, for every rate allowed', () => {
  for (const rate of [1, 2, 3, 7, 20, 333, 1000]) {
    const starts = Array.from({ length: 3 * rate + 1 }, (_, i) => i * sendSpacingMs(rate))
    const most = Math.max(...starts.map((start) => starts.filter((at) => at >= start && at < start + RATE_WINDOW_MS).length))
    assert.ok(most <= rate, `rate ${rate}: ${most} starts within one second`)
  }
})

test('When a send waits for its time, then it never starts before it, though timers fire up to a millisecond early', async () => {
  const signal = new AbortController().signal
  for (let i = 0; i < 40; i++) {
    const at = performance.now() + 1 + (i % 7) * 0.37
    await sleepUntil(at, signal)
    const early = at - performance.now()
    assert.ok(early <= 0, `started ${early.toFixed(3)} ms early`)
  }
})

test('When a lease is given back until the next send\'s time, then a wall clock reading that time or later never comes before the send\'s time', async () => {
  for (let i = 0; i < 40; i++) {
    const at = performance.now() + 2 + (i % 5) * 0.29
    const until = wallTimeOf(at, () => Date.now())
    // what another instance does: takes the endpoint once its wall clock reads `until`
    while (Date.now() < until) await new Promise((resolve) => setImmediate(resolve))
    const early = at - performance.now()
    assert.ok(early <= 0, `the wall clock read ${until} ${early.toFixed(3)} ms before the send's time`)
  }
})

test('When the process is held up right after reading the wall clock (a loaded machine), then the lease is still never given back before the send\'s time', async () => {
  for (let i = 0; i < 10; i++) {
    const at = performance.now() + 2 + (i % 5) * 0.29
    const until = wallTimeOf(at, () => {
      const now = Date.now()
      // preempted for 2 ms after the reading (CI saw 0.4 ms)
      for (const end = performance.now() + 2; performance.now() < end;);
      return now
    })
    while (Date.now() < until) await new Promise((resolve) => setImmediate(resolve))
    const early = at - performance.now()
    assert.ok(early <= 0, `the wall clock read ${until} ${early.toFixed(3)} ms before the send's time`)
  }
})
