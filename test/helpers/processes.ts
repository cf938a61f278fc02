import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import type { TestContext } from 'node:test'
import { join } from 'node:path'
import { childEnv } from '../../tools/harness/child-env.js'
import { ensureFreshBuild } from '../../tools/harness/build-freshness.js'
import { freePort } from '../../tools/harness/free-port.js'
import { exitOf, type Exit } from '../../tools/harness/process-exit.js'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { ServerProcess, type ServerEntry } from '../../tools/harness/server-process.js'
import { within } from '../../tools/harness/within.js'

export { childEnv } from '../../tools/harness/child-env.js'
export { freePort } from '../../tools/harness/free-port.js'
export { copyInstallation } from '../../tools/harness/installation.js'
export type { Exit } from '../../tools/harness/process-exit.js'
export { childPids } from '../../tools/harness/process-tree.js'
export { PROJECT_ROOT } from '../../tools/harness/project-root.js'
export { ServerProcess, type ServerEntry } from '../../tools/harness/server-process.js'
export { within } from '../../tools/harness/within.js'

export interface CliResult extends Exit {
  stdout: string
  stderr: string
}

const CLI_TIMEOUT_MS = 30_000

export interface CliOptions {
  /** The installation whose CLI runs (see `copyInstallation`); the repository by default. */
  installation?: string
  /** Its working directory; the installation by default. */
  cwd?: string
}

/**
 * Runs the CLI as the package's `bin` does, `node dist/bin/cli.js` (the build: a third of the CPU of
 * tsx compiling `src/bin/cli.ts` at every start), with `args` to completion (killed after 30 s),
 * and returns what it printed. Runs `npm run build` first when `dist/` is older than `src/`.
 */
export async function runCli (args: readonly string[], env: NodeJS.ProcessEnv, options: CliOptions = {}): Promise<CliResult> {
  ensureFreshBuild()
  const root = options.installation ?? PROJECT_ROOT
  const child = spawn(process.execPath, [join(root, 'dist/bin/cli.js'), ...args], { cwd: options.cwd ?? root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  try {
    const exit = await within(CLI_TIMEOUT_MS, `petstore ${args.join(' ')} did not exit`, exitOf(child))
    return { ...exit, stdout, stderr }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

/** Where a server runs from: a copied installation, and its working directory. */
export type ServerPlace = CliOptions

export interface ServerProcesses {
  /** Spawns a server on a free port without waiting for it. */
  spawn (env: Record<string, string>, place?: ServerPlace): Promise<ServerProcess>
  /** Spawns a server on a free port and waits until `/healthz` answers. */
  start (env: Record<string, string>, place?: ServerPlace): Promise<ServerProcess>
}

/**
 * Starts servers for one test and kills whichever still run when it ends.
 * Call it before `tempDir(t)`: cleanups run in the order they were registered,
 * so the processes are gone before their directory is removed.
 * They run the build (`node dist/bin/server.js`, as production does) unless `entry` is `source`;
 * `npm run build` runs first when `dist/` is older than `src/`.
 */
export function serverProcesses (t: TestContext, options: { entry?: ServerEntry } = {}): ServerProcesses {
  const entry = options.entry ?? 'build'
  if (entry === 'build') ensureFreshBuild()
  const started: ServerProcess[] = []
  t.after(async () => { await Promise.all(started.map((server) => server.kill())) })
  const spawnServer = async (env: Record<string, string>, place: ServerPlace = {}): Promise<ServerProcess> => {
    const port = await freePort()
    // shedding off unless a test turns it on: on a machine loaded by other suites, a server's loop falls
    // behind for reasons of the machine's, and suites about other things would get 503 overloaded
    const server = new ServerProcess({ entry, ...place, env: childEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'info', OVERLOAD_SHEDDING: 'false', ...env, PORT: env.PORT ?? String(port) }), port })
    started.push(server)
    return server
  }
  return {
    spawn: spawnServer,
    async start (env, place) {
      const server = await spawnServer(env, place)
      await server.waitUntilHealthy()
      return server
    }
  }
}

/** Opens a TCP connection to 127.0.0.1:`port`; rejects with the socket error (e.g. ECONNREFUSED). */
export async function openSocket (port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.off('error', reject)
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Reads one complete HTTP/1.1 response with a `content-length` from `socket`, for at most `ms`. */
export async function readResponse (socket: Socket, ms = 10_000): Promise<RawResponse> {
  return within(ms, 'no complete HTTP response arrived', new Promise((resolve, reject) => {
    let received = Buffer.alloc(0)
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk])
      const headEnd = received.indexOf('\r\n\r\n')
      if (headEnd === -1) return
      const [statusLine = '', ...headerLines] = received.subarray(0, headEnd).toString('latin1').split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const length = Number(headers['content-length'] ?? 0)
      const body = received.subarray(headEnd + 4)
      if (body.length < length) return
      cleanup()
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.subarray(0, length).toString('utf8') })
    }
    const onEnd = (): void => {
      cleanup()
      reject(new Error(`connection ended before a complete response; got:\n${received.toString('latin1')}`))
    }
    const cleanup = (): void => {
      socket.off('data', onData)
      socket.off('end', onEnd)
      socket.off('error', onEnd)
    }
    socket.on('data', onData)
    socket.once('end', onEnd)
    socket.once('error', onEnd)
  }))
}
