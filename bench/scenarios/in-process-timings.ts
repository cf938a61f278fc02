import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises'
import { BackgroundLoop } from '../../src/infra/background/background-loop.js'
import { isWholeNumberLiteral, parseJson } from '../../src/infra/json/exact-json.js'
import { Metrics } from '../../src/infra/metrics/metrics.js'
import type { Plan } from '../_util/plan.js'
import { LOOP_STOP_GRACE_MS, type TimingSamples } from '../report.js'

/** A poll far away: a pass that comes sooner was not waiting for it. */
const FAR_POLL_MS = 60_000

/** Resolves once `check` holds, looking after every turn of the event loop; rejects after 10 s. */
async function until (check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 10_000
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`not within 10 s: ${what}`)
    await turn()
  }
}

/** Runs `work` once, in ms. */
function timeSync (work: () => void): number {
  const started = performance.now()
  work()
  return performance.now() - started
}

/** A loop on metrics of its own, as the service runs them, with a poll far away. */
function loopOf (pass: () => Promise<boolean>): BackgroundLoop {
  return new BackgroundLoop({ name: 'bench_loop', intervalMs: FAR_POLL_MS, pass, onError: () => {}, metrics: new Metrics() })
}

async function loopTimings (): Promise<{ firstPass: number, wake: number, moreWork: number }> {
  let passes = 0
  const idle = loopOf(async () => { passes++; return false })
  try {
    const started = performance.now()
    idle.start()
    await until(() => passes === 1, 'the first pass')
    const firstPass = performance.now() - started
    const woken = performance.now()
    idle.wake()
    await until(() => passes === 2, 'the pass of the wake')
    const wake = performance.now() - woken

    let busyPasses = 0
    const busy = loopOf(async () => ++busyPasses < 4)
    try {
      const begun = performance.now()
      busy.start()
      await until(() => busyPasses === 4, 'four passes')
      return { firstPass, wake, moreWork: performance.now() - begun }
    } finally {
      await busy.stop()
    }
  } finally {
    await idle.stop()
  }
}

/** stop() of a loop whose pass in flight outlasts its stop grace ({@link LOOP_STOP_GRACE_MS}), to stop()'s end, in ms. */
async function stopGraceTiming (): Promise<number> {
  let begun = false
  const pass = async (signal: AbortSignal): Promise<boolean> => {
    begun = true
    await sleep(5_000, undefined, { signal }).catch(() => {})
    return false
  }
  const loop = new BackgroundLoop({ name: 'bench_loop', intervalMs: FAR_POLL_MS, stopGraceMs: LOOP_STOP_GRACE_MS, pass, onError: () => {}, metrics: new Metrics() })
  loop.start()
  await until(() => begun, 'the pass in flight')
  const stopping = performance.now()
  await loop.stop()
  return performance.now() - stopping
}

/**
 * What the tests of exact JSON and of BackgroundLoop used to time, in this process (the runner's, on the load
 * generator's CPU), `plan.rounds × 5` times each, the first run included: a test ran each once, cold.
 */
export async function inProcessTimings (plan: Plan): Promise<TimingSamples[]> {
  const runs = plan.rounds * 5
  const zeros = `1${'0'.repeat(16_000)}1`
  const samples = {
    exactJsonHugeExponent: [] as number[],
    exactJsonZeroRun: [] as number[],
    loopFirstPass: [] as number[],
    loopWake: [] as number[],
    loopMoreWork: [] as number[],
    loopStopGrace: [] as number[]
  }
  for (let i = 0; i < runs; i++) {
    samples.exactJsonHugeExponent.push(timeSync(() => { parseJson('[1e999999999]') }))
    samples.exactJsonZeroRun.push(timeSync(() => {
      parseJson(`[${zeros},${zeros}.5]`)
      isWholeNumberLiteral(`${zeros}.5`)
    }))
    const loop = await loopTimings()
    samples.loopFirstPass.push(loop.firstPass)
    samples.loopWake.push(loop.wake)
    samples.loopMoreWork.push(loop.moreWork)
    samples.loopStopGrace.push(await stopGraceTiming())
  }
  return Object.entries(samples).map(([target, samplesMs]) => ({ target: target as keyof typeof samples, samplesMs }))
}
