import { setTimeout as sleep } from 'node:timers/promises'
import { rssBytes } from '../../tools/harness/rss-sampler.js'
import type { BenchContext } from '../_util/bench-context.js'
import { LIST_PATH, log } from '../_util/plan.js'
import { spawnService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'

/** Cold starts of the build, and the idle memory after each. */
export interface ColdStart {
  /** Spawn to the first 200 of listPets with the key, per start. */
  coldStartMs: number[]
  /** RSS 1 s after that first 200, per start. */
  idleRssMb: number[]
}

/** Starts the service `plan.coldStarts` times on `store` (seeded, migrated), each time from nothing. */
export async function coldStart (context: BenchContext, store: BenchStore): Promise<ColdStart> {
  const result: ColdStart = { coldStartMs: [], idleRssMb: [] }
  for (let i = 0; i < context.plan.coldStarts; i++) {
    const started = performance.now()
    const server = await spawnService(store.url, context.apiKey)
    try {
      const ms = await server.waitForStatus(LIST_PATH, { headers: context.headers, intervalMs: 5, timeoutMs: 60_000, since: started })
      await sleep(1_000)
      const rss = rssBytes(server.processTree())
      result.coldStartMs.push(ms)
      if (rss !== undefined) result.idleRssMb.push(rss / 1024 / 1024)
      log(`cold start ${i + 1}/${context.plan.coldStarts}: ${Math.round(ms)} ms to the first 200, idle RSS ${rss === undefined ? '–' : (rss / 1024 / 1024).toFixed(1)} MB`)
    } finally {
      await stopServer(server)
    }
  }
  return result
}
