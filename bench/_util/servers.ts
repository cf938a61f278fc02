import { childEnv } from '../../tools/harness/child-env.js'
import { SERVER_CPU } from '../../tools/harness/cpu-pinning.js'
import { freePort } from '../../tools/harness/free-port.js'
import { ServerProcess } from '../../tools/harness/server-process.js'
import { contractPeerScript } from './contract-peer-build.js'
import { log } from './plan.js'

/** The servers the load scenarios compare: the bare baseline, the plain peer, the contract-equal peer and the service. */
export type Role = 'bare' | 'peer' | 'contract' | 'service'

const STARTUP_TIMEOUT_MS = 60_000
// the per-key quota of the service and the contract-equal peer: on, and never reached
const UNREACHED_RATE_LIMIT = '1000000000'
const SHUTDOWN_TIMEOUT_MS = 20_000

/** Every server the run has started and not yet stopped: killed if the run is cut short. */
const live = new Set<ServerProcess>()

/** Where each service the run started serves `GET /metrics` (its `METRICS_PORT`). */
const metricsUrls = new WeakMap<ServerProcess, string>()

/** The `/metrics` address of a service this run started; undefined for the baseline and the peer. */
export function metricsUrlOf (server: ServerProcess): string | undefined {
  return metricsUrls.get(server)
}

/** The service's environment in the bench: production defaults, plus what the bench must set. */
function serviceEnv (port: number, databaseUrl: string, apiKey: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return childEnv({
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    PETSTORE_API_KEYS: apiKey,
    LOG_LEVEL: 'info',
    // the per-key limit stays on (its work is measured) with a quota the load never reaches
    RATE_LIMIT_MAX: UNREACHED_RATE_LIMIT,
    ...extra
  })
}

/** How the bench starts the service. */
export interface ServiceOptions {
  /** CPUs to pin it to; the servers' CPU by default. */
  cpuList?: string
  /** Variables besides the production defaults. */
  env?: Record<string, string>
  /** Another installation's build (an A/B against another revision); the repository's by default. */
  installation?: string
}

function track (server: ServerProcess): ServerProcess {
  live.add(server)
  server.exited.then(() => live.delete(server), () => {})
  return server
}

/**
 * Spawns the built service (`node dist/bin/server.js`) pinned to `cpuList` (the servers' CPU by
 * default) without waiting for it. Its access log at info goes to /dev/null; its metrics listen on a
 * port of their own ({@link metricsUrlOf}).
 */
export async function spawnService (databaseUrl: string, apiKey: string, options: ServiceOptions = {}): Promise<ServerProcess> {
  const port = await freePort()
  // metrics on, as a production deployment runs it: the event-loop lag is read from them
  const metricsPort = await freePort()
  const server = track(new ServerProcess({
    env: serviceEnv(port, databaseUrl, apiKey, { METRICS_PORT: String(metricsPort), ...options.env }),
    port,
    entry: 'build',
    installation: options.installation,
    cpuList: options.cpuList ?? SERVER_CPU,
    stdout: 'discard',
    label: 'the service'
  }))
  metricsUrls.set(server, `http://127.0.0.1:${metricsPort}/metrics`)
  return server
}

/** The service, ready: `/readyz` answers 200. */
export async function startService (databaseUrl: string, apiKey: string, options: ServiceOptions = {}): Promise<ServerProcess> {
  const server = await spawnService(databaseUrl, apiKey, options)
  await server.waitForStatus('/readyz', { intervalMs: 50, timeoutMs: STARTUP_TIMEOUT_MS })
  return server
}

async function startScript (label: string, script: string, env: Record<string, string>, ready: { path: string, headers?: Record<string, string> }): Promise<ServerProcess> {
  const port = await freePort()
  const server = track(new ServerProcess({ env: childEnv({ PORT: String(port), ...env }), port, script, cpuList: SERVER_CPU, stdout: 'discard', label }))
  await server.waitForStatus(ready.path, { headers: ready.headers, intervalMs: 50, timeoutMs: STARTUP_TIMEOUT_MS })
  return server
}

/** The bare `node:http` baseline (bench/baseline-server.ts): a constant page of 20 pets for every request. */
export async function startBare (): Promise<ServerProcess> {
  return startScript('the bare baseline', 'bench/baseline-server.ts', {}, { path: '/' })
}

/** The plain peer (bench/peers/plain-fastify.ts) on `databaseUrl`, a store the service has migrated. */
export async function startPeer (databaseUrl: string, apiKey: string): Promise<ServerProcess> {
  return startScript('the plain peer', 'bench/peers/plain-fastify.ts', { DATABASE_URL: databaseUrl, PEER_API_KEY: apiKey },
    { path: '/v1/pets?limit=1', headers: { authorization: `Bearer ${apiKey}` } })
}

/**
 * Spawns the contract-equal peer (bench/peers/contract-equal/server.ts, compiled: contract-peer-build.ts) on `databaseUrl`, a
 * store the service has migrated, without waiting for it: the service's settings for what both do (the key, the access log at
 * info, the per-key limit on and never reached, metrics on), as the service's are set in {@link spawnService}.
 */
export async function spawnContractPeer (databaseUrl: string, apiKey: string): Promise<ServerProcess> {
  const [port, metricsPort, script] = await Promise.all([freePort(), freePort(), contractPeerScript()])
  return track(new ServerProcess({
    env: childEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PETSTORE_API_KEYS: apiKey,
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: UNREACHED_RATE_LIMIT,
      METRICS_PORT: String(metricsPort)
    }),
    port,
    script,
    cpuList: SERVER_CPU,
    stdout: 'discard',
    label: 'the contract-equal peer'
  }))
}

/** The contract-equal peer, ready: `/healthz` answers 200. */
export async function startContractPeer (databaseUrl: string, apiKey: string): Promise<ServerProcess> {
  const server = await spawnContractPeer(databaseUrl, apiKey)
  await server.waitForStatus('/healthz', { intervalMs: 50, timeoutMs: STARTUP_TIMEOUT_MS })
  return server
}

/** SIGTERM, and SIGKILL (with its children) when it has not exited within 20 s. */
export async function stopServer (server: ServerProcess): Promise<void> {
  try {
    await server.stop(SHUTDOWN_TIMEOUT_MS)
  } catch (error) {
    log(`${server.label} did not stop: ${error instanceof Error ? error.message : String(error)}; killing it`)
    await server.kill()
  }
}

/** Kills every server still running: the run is over or was cut short. */
export async function killAll (): Promise<void> {
  await Promise.all([...live].map((server) => server.kill().catch((error: unknown) => { log(`could not kill ${server.label}: ${String(error)}`) })))
}

/** Starts the service on `databaseUrl` once and stops it: its start-up migrates the store. */
export async function migrateStore (databaseUrl: string, apiKey: string): Promise<void> {
  await stopServer(await startService(databaseUrl, apiKey))
}
