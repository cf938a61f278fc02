import { setTimeout as sleep } from 'node:timers/promises'
import { cpuTimeNs } from '../../tools/harness/cpu-time.js'
import { rssBytes } from '../../tools/harness/rss-sampler.js'
import type { BenchContext } from '../_util/bench-context.js'
import { LIST_PATH, log } from '../_util/plan.js'
import { spawnService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'

/** Cold starts of the build, and the idle memory after each. */
export interface ColdStart {
  /** Spawn to the first 200 of listPets with the key, per start. */
  coldStartMs: number[]
  /** CPU time the process had used by that first 200 (all its threads): what start-up costs, however busy the machine. */
  coldStartCpuMs: number[]
  /** RSS 1 s after that first 200, per start. */
  idleRssMb: number[]
}

/**
 * Starts the service `starts` times (`plan.coldStarts` by default) on `store` (seeded, migrated), each time
 * from nothing; the repository's build, or `installation`'s (an A/B against another revision, bench/ab.ts);
 * `env` adds variables to the production defaults.
 */
export async function coldStart (context: BenchContext, store: BenchStore, options: { installation?: string, starts?: number, env?: Record<string, string> } = {}): Promise<ColdStart> {
  const result: ColdStart = { coldStartMs: [], coldStartCpuMs: [], idleRssMb: [] }
  const starts = options.starts ?? context.plan.coldStarts
  for (let i = 0; i < starts; i++) {
    const started = performance.now()
    const server = await spawnService(store.url, context.apiKey, {
      ...(options.installation === undefined ? {} : { installation: options.installation }),
      ...(options.env === undefined ? {} : { env: options.env })
    })
    try {
      const ms = await server.waitForStatus(LIST_PATH, { headers: context.headers, intervalMs: 5, timeoutMs: 60_000, since: started })
      const cpuNs = cpuTimeNs(server.processTree())
      await sleep(1_000)
      const rss = rssBytes(server.processTree())
      result.coldStartMs.push(ms)
      if (cpuNs !== undefined) result.coldStartCpuMs.push(cpuNs / 1e6)
      if (rss !== undefined) result.idleRssMb.push(rss / 1024 / 1024)
      log(`cold start ${i + 1}/${starts}: ${Math.round(ms)} ms to the first 200 (${cpuNs === undefined ? '–' : Math.round(cpuNs / 1e6)} ms of CPU), ` +
        `idle RSS ${rss === undefined ? '–' : (rss / 1024 / 1024).toFixed(1)} MB`)
    } finally {
      await stopServer(server)
    }
  }
  return result
}
