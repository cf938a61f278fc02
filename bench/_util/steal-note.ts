import { median, type Rounds } from './measure.js'

const pct = (value: number | undefined): string => value === undefined ? '–' : `${value.toFixed(1)} %`

/**
 * What the hypervisor took during the timed runs of these rounds (every scenario, every server), as a note: the
 * median and the largest share of the servers' CPU and of the load generator's. A stall of the load generator's
 * CPU delays every answer in flight as wrk times them, and a slower server's run holds fewer answers, so the same
 * stalls move its p99 more; empty when /proc/stat said nothing.
 */
export function stealNotes (every: readonly Rounds[]): string[] {
  const measurements = every.flatMap((rounds) => Object.values(rounds).flat())
  const server = measurements.flatMap((m) => m.stealPercent?.server === undefined ? [] : [m.stealPercent.server])
  const load = measurements.flatMap((m) => m.stealPercent?.loadGenerator === undefined ? [] : [m.stealPercent.loadGenerator])
  if (server.length === 0 && load.length === 0) return []
  return [`The hypervisor's steal during the ${measurements.length} timed runs: of the servers' CPU median ${pct(median(server))}, ` +
    `largest ${pct(server.length === 0 ? undefined : Math.max(...server))}; of the load generator's median ${pct(median(load))}, ` +
    `largest ${pct(load.length === 0 ? undefined : Math.max(...load))} (a stall of the load generator's CPU delays every answer in flight as wrk ` +
    'times them; a slower server\'s run holds fewer answers, so the same stalls move its p99 and p99/p50 more).']
}
