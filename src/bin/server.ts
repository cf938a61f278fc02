import './start-up-first.js'
import cluster from 'node:cluster'
import type { Server } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import closeWithGrace from 'close-with-grace'
import { buildApp } from '../app.js'
import { SHUTDOWN_BUDGET_MS } from '../infra/background/shutdown-budget.js'
import { createBootstrapKeyIfNone } from '../capabilities/keys/index.js'
import { ConfigError, loadConfig, type Config } from '../infra/config/config.js'
import { runPrimary, shareMetricsWithPrimary } from './cluster.js'
import { startMetricsServer } from '../infra/metrics/metrics-server.js'
import { releaseYoungGeneration } from '../infra/runtime/start-up-heap.js'

// 22 base64 characters carry 128 bits
const MIN_RECOMMENDED_KEY_LENGTH = 22

async function start (config: Config): Promise<void> {
  const app = await buildApp({ config })
  let metricsServer: Server | undefined

  // the exit is forced (code 1) when the shutdown overruns its budget
  closeWithGrace({ delay: SHUTDOWN_BUDGET_MS, logger: app.log }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an unexpected error')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    metricsServer?.closeAllConnections()
    metricsServer?.close()
    // in the order of shutdown-budget.ts: HTTP drains, the background work stops, the store closes
    await app.close()
  })

  for (const [variable, keys] of [['PETSTORE_API_KEYS', config.apiKeys], ['PETSTORE_READ_API_KEYS', config.readApiKeys], ['PETSTORE_ADMIN_API_KEYS', config.adminApiKeys]] as const) {
    const weakKeys = keys.filter((key) => key.length < MIN_RECOMMENDED_KEY_LENGTH).length
    if (weakKeys > 0) app.log.warn(`${variable} has ${weakKeys} key(s) shorter than ${MIN_RECOMMENDED_KEY_LENGTH} characters; use npx petstore keys create for strong keys`)
  }

  // before listening, so the key works on the first request the server answers
  const key = await createBootstrapKeyIfNone(app.keyStore, [...config.apiKeys, ...config.adminApiKeys])
  try {
    await app.listen({ port: config.port, host: config.host, backlog: 4096 })
    if (cluster.isWorker) {
      // the primary serves METRICS_PORT, adding up every worker's figures
      app.metrics.collectProcessMetrics()
      shareMetricsWithPrimary(app.metrics.registry)
    } else if (config.metricsPort !== undefined) {
      app.metrics.collectProcessMetrics()
      metricsServer = await startMetricsServer(app.metrics.registry, config.metricsPort, config.host, app.log)
      app.log.info({ address: metricsServer.address() }, 'metrics served at GET /metrics')
    }
    app.log.info({ store: app.database.description }, 'petstore ready')
    releaseYoungGeneration()
  } finally {
    // also when a port is taken: the key is stored already, and this is the only time it can be shown
    // pino writes stdout asynchronously, so a banner written beside it landed before or among the
    // start-up lines depending on the store; through pino's own stream it always follows them
    if (key !== undefined) printBootstrapKey(key, config, logDestination(app.log))
  }
}

/** Where the logger writes (its stream, in order with its lines); stdout when it has none. */
function logDestination (log: FastifyBaseLogger): (text: string) => void {
  const stream = (log as unknown as Partial<Record<symbol, { write: (text: string) => unknown }>>)[pino.symbols.streamSym]
  return stream === undefined ? (text) => { process.stdout.write(text) } : (text) => { stream.write(text) }
}

function printBootstrapKey (key: string, config: Config, write: (text: string) => void = (text) => { process.stdout.write(text) }): void {
  write([
    '',
    'No API key existed, so petstore created one (role admin: every operation). It is shown only this once; keep it:',
    '',
    `  ${key}`,
    '',
    'Try it:',
    `  curl -H 'Authorization: Bearer ${key}' ${config.publicBaseUrl}/pets`,
    '',
    'Manage keys with: npx petstore keys create --name <name> | keys list | keys revoke <id>',
    '',
    ''
  ].join('\n'))
}

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  process.stderr.write(`petstore: configuration error: ${error.message}\n`)
  process.exit(1)
}

const run = config.workers > 1 && cluster.isPrimary
  ? runPrimary(config, { shutdownBudgetMs: SHUTDOWN_BUDGET_MS, printBootstrapKey: (key) => { printBootstrapKey(key, config) } })
  : start(config)
run.catch((error: unknown) => {
  process.stderr.write(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
