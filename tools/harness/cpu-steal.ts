import { readFileSync } from 'node:fs'

/** Ticks of one CPU from /proc/stat: stolen by the hypervisor, and all of them. */
export interface CpuTicks {
  steal: number
  total: number
}

/**
 * The ticks of each CPU (`cpu0`, `cpu1`, … and `cpu` for all) in a /proc/stat text: user, nice, system,
 * idle, iowait, irq, softirq and steal summed as the total (guest time is already in user), steal the
 * eighth field.
 */
export function parseProcStat (text: string): Map<string, CpuTicks> {
  const cpus = new Map<string, CpuTicks>()
  for (const line of text.split('\n')) {
    const [name, ...fields] = line.trim().split(/\s+/)
    if (name === undefined || !/^cpu\d*$/.test(name)) continue
    const ticks = fields.slice(0, 8).map(Number)
    if (ticks.length < 8 || ticks.some((tick) => !Number.isFinite(tick))) continue
    cpus.set(name, { steal: ticks[7] as number, total: ticks.reduce((sum, tick) => sum + tick, 0) })
  }
  return cpus
}

/** Every CPU's ticks now; empty where /proc/stat cannot be read. */
export function cpuTicks (): Map<string, CpuTicks> {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'))
  } catch {
    return new Map()
  }
}

/**
 * The share of CPU `cpu`'s time (`'0'`, `'1'`, or `''` for all) the hypervisor gave to others between two
 * readings, in percent: a virtual machine's steal, during which a process that was ready to run did not;
 * undefined where /proc/stat did not say or no tick passed.
 */
export function stealPercent (before: Map<string, CpuTicks>, after: Map<string, CpuTicks>, cpu: string): number | undefined {
  const a = before.get(`cpu${cpu}`)
  const b = after.get(`cpu${cpu}`)
  if (a === undefined || b === undefined || b.total <= a.total) return undefined
  return 100 * (b.steal - a.steal) / (b.total - a.total)
}
