import { setTimeout as sleep } from 'node:timers/promises'
import { cpuTimeNs } from '../../tools/harness/cpu-time.js'
import { rssBytes } from '../../tools/harness/rss-sampler.js'
import type { BenchContext } from '../_util/bench-context.js'
import { LIST_PATH, log } from '../_util/plan.js'
import { spawnContractPeer, spawnService, stopServer } from '../_util/servers.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
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

/** How a cold start is made: the service (the repository's build or `installation`'s, with `env` added), or the contract-equal peer. */
export interface ColdStartOptions {
  installation?: string
  starts?: number
  env?: Record<string, string>
  /** The contract-equal peer instead of the service (bench/peers/contract-equal/, compiled as it would be deployed). */
  contractPeer?: boolean
}

/**
 * Starts the service `starts` times (`plan.coldStarts` by default) on `store` (seeded, migrated), each time
 * from nothing; the repository's build, or `installation`'s (an A/B against another revision, bench/ab.ts);
 * `env` adds variables to the production defaults. With `contractPeer`, the contract-equal peer instead.
 */
export async function coldStart (context: BenchContext, store: BenchStore, options: ColdStartOptions = {}): Promise<ColdStart> {
  const result: ColdStart = { coldStartMs: [], coldStartCpuMs: [], idleRssMb: [] }
  const starts = options.starts ?? context.plan.coldStarts
  for (let i = 0; i < starts; i++) {
    const started = performance.now()
    const server = await spawnFor(context, store, options)
    try {
      const ms = await server.waitForStatus(LIST_PATH, { headers: context.headers, intervalMs: 5, timeoutMs: 60_000, since: started })
      const cpuNs = cpuTimeNs(server.processTree())
      await sleep(1_000)
      const rss = rssBytes(server.processTree())
      result.coldStartMs.push(ms)
      if (cpuNs !== undefined) result.coldStartCpuMs.push(cpuNs / 1e6)
      if (rss !== undefined) result.idleRssMb.push(rss / 1024 / 1024)
      log(`cold start${options.contractPeer === true ? ' of the contract-equal peer' : ''} ${i + 1}/${starts}: ${Math.round(ms)} ms to the first 200 (${cpuNs === undefined ? '–' : Math.round(cpuNs / 1e6)} ms of CPU), ` +
        `idle RSS ${rss === undefined ? '–' : (rss / 1024 / 1024).toFixed(1)} MB`)
    } finally {
      await stopServer(server)
    }
  }
  return result
}

function spawnFor (context: BenchContext, store: BenchStore, options: ColdStartOptions): Promise<ServerProcess> {
  if (options.contractPeer === true) return spawnContractPeer(store.url, context.apiKey)
  return spawnService(store.url, context.apiKey, {
    ...(options.installation === undefined ? {} : { installation: options.installation }),
    ...(options.env === undefined ? {} : { env: options.env })
  })
}

/** The service's cold starts and the contract-equal peer's, alternated (service, peer, service, peer…) on one store. */
export async function coldStartsBeside (context: BenchContext, store: BenchStore): Promise<{ service: ColdStart, contract: ColdStart }> {
  const service: ColdStart = { coldStartMs: [], coldStartCpuMs: [], idleRssMb: [] }
  const contract: ColdStart = { coldStartMs: [], coldStartCpuMs: [], idleRssMb: [] }
  for (let i = 0; i < context.plan.coldStarts; i++) {
    for (const [into, contractPeer] of [[service, false], [contract, true]] as const) {
      const one = await coldStart(context, store, { starts: 1, contractPeer })
      into.coldStartMs.push(...one.coldStartMs)
      into.coldStartCpuMs.push(...one.coldStartCpuMs)
      into.idleRssMb.push(...one.idleRssMb)
    }
  }
  return { service, contract }
}
