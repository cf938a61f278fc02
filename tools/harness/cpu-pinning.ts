import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

/** The CPU the measured servers run on. */
export const SERVER_CPU = '0'
/** The CPU the load generator (and the runner) runs on. */
export const LOAD_GENERATOR_CPU = '1'

const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
const cores = availableParallelism()

/** Whether processes can be pinned: `taskset` is there and the machine has two cores, one for the servers, one for the load. */
export const PINNING: { readonly available: boolean, readonly reason: string } = Object.freeze(
  !hasTaskset
    ? { available: false, reason: 'taskset is not installed (Debian package util-linux)' }
    : cores < 2
      ? { available: false, reason: `only ${cores} core` }
      : { available: true, reason: `servers on CPU ${SERVER_CPU}, load generator on CPU ${LOAD_GENERATOR_CPU}` }
)

/** `argv` run under `taskset -c <cpuList>` (which execs: the pid stays the command's) when pinning is available, else as it is. */
export function pinnedCommand (cpuList: string | undefined, argv: readonly string[]): string[] {
  return PINNING.available && cpuList !== undefined ? ['taskset', '-c', cpuList, ...argv] : [...argv]
}

/** Pins every thread of this process to `cpuList` (its later children inherit it); false when it could not. */
export function pinThisProcess (cpuList: string): boolean {
  if (!PINNING.available) return false
  return spawnSync('taskset', ['-a', '-c', '-p', cpuList, String(process.pid)], { stdio: 'ignore' }).status === 0
}
