import cluster, { type Worker } from 'node:cluster'
import type { Server } from 'node:http'
import { pino } from 'pino'
import { AggregatorRegistry, type Registry } from 'prom-client'
import { createBootstrapKeyIfNone, createKeyStore } from '../capabilities/keys/index.js'
import type { Config } from '../infra/config/config.js'
import { startMetricsServer } from '../infra/metrics/metrics-server.js'
import { openDatabase } from '../infra/database/open-database.js'
import { systemClock } from '../infra/runtime/clock.js'
import { releaseYoungGeneration } from '../infra/runtime/start-up-heap.js'

export interface PrimaryOptions {
  /** How long a worker may take to shut down after SIGTERM before it forces its own exit. */
  shutdownBudgetMs: number
  /** Shows the bootstrap key (to stdout) when the primary created it. */
  printBootstrapKey: (key: string) => void
}

// a worker that dies within this long of starting is failing to start, not crashing under load
const START_GRACE_MS = 10_000
const RESTART_DELAY_MS = 1000

/**
 * The primary process of `WORKERS=N`: it brings the store up to date once (migrations, settings,
 * the bootstrap key) so that workers never race at start, forks N workers that share the port
 * (node:cluster), restarts a worker that crashes, serves the workers' metrics added up on
 * METRICS_PORT, and on SIGTERM or SIGINT lets every worker drain, then exits.
 */
export async function runPrimary (config: Config, options: PrimaryOptions): Promise<void> {
  const log = pino({ level: config.logLevel })
  // migrations run here, once, before any worker opens the store
  const { database } = await openDatabase(config.database)
  let key: string | undefined
  try {
    key = await createBootstrapKeyIfNone(createKeyStore(database, systemClock), [...config.apiKeys, ...config.adminApiKeys])
  } finally {
    await database.close()
  }

  // the key is stored already: whether the workers come up or not, this is the only time it can be shown
  const showKey = (): void => {
    if (key !== undefined) options.printBootstrapKey(key)
    key = undefined
  }
  let stopping = false
  let exitCode = 0
  let ready = 0
  const startedAt = new Map<Worker, number>()
  // a worker that has exited may still be listed until its IPC channel closes
  const running = (): Worker[] => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead())
  const fork = (): void => {
    const worker = cluster.fork()
    startedAt.set(worker, Date.now())
    // e.g. a connection handed to a worker that has just died: logged, never fatal to the primary
    worker.on('error', (error) => { log.error({ err: error, worker: worker.process.pid }, 'worker IPC error') })
    worker.once('listening', () => {
      if (++ready === config.workers) {
        log.info({ workers: config.workers, store: database.description }, 'petstore ready')
        releaseYoungGeneration()
        showKey()
      }
    })
  }

  cluster.on('exit', (worker, code, signal) => {
    const age = Date.now() - (startedAt.get(worker) ?? 0)
    startedAt.delete(worker)
    if (stopping) {
      if (running().length === 0) process.exit(exitCode)
      return
    }
    log.error({ worker: worker.process.pid, code, signal }, 'worker exited')
    if (age < START_GRACE_MS && ready < config.workers) {
      // it never came up (a port taken, a store refused): restarting would only loop
      log.fatal('a worker failed to start; stopping')
      showKey()
      stopAll(1)
      return
    }
    setTimeout(fork, RESTART_DELAY_MS).unref()
  })

  let metricsServer: Server | undefined
  const stopAll = (code: number): void => {
    if (stopping) return
    stopping = true
    exitCode = code
    metricsServer?.close()
    metricsServer?.closeAllConnections()
    const workers = running()
    if (workers.length === 0) process.exit(exitCode)
    for (const worker of workers) worker.process.kill('SIGTERM')
    // a worker exits within its own budget; this is the backstop
    setTimeout(() => { process.exit(exitCode === 0 ? 1 : exitCode) }, options.shutdownBudgetMs + 5_000).unref()
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      log.info({ signal }, 'shutting down: workers finish their in-flight requests')
      stopAll(0)
    })
  }

  if (config.metricsPort !== undefined) {
    const aggregator = new AggregatorRegistry()
    const source = { contentType: aggregator.contentType, metrics: async () => await aggregator.clusterMetrics() }
    try {
      metricsServer = await startMetricsServer(source, config.metricsPort, config.host, log)
    } catch (error) {
      showKey()
      throw error
    }
    log.info({ address: metricsServer.address() }, 'metrics of all workers served at GET /metrics')
  }
  for (let i = 0; i < config.workers; i++) fork()
}

/** In a worker: lets the primary collect this worker's metrics for METRICS_PORT. */
export function shareMetricsWithPrimary (registry: Registry): void {
  // constructing one installs the worker's side of the exchange; the instance itself is not needed
  const installed = new AggregatorRegistry()
  installed.clear()
  AggregatorRegistry.setRegistries([registry])
}
