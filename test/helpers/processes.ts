import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { CONFIG_VARIABLES } from '../../src/config.js'

/** The repository root, where `src/bin/cli.ts` and `src/bin/server.ts` live. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The test runner's environment without any petstore setting, plus `overrides`. */
export function childEnv (overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of CONFIG_VARIABLES) delete env[name]
  return { ...env, ...overrides }
}

/** Spawns `node --import tsx <script> ...args` from the repository root. */
function spawnTsx (script: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** Resolves once the process has exited and its output is drained. */
function exitOf (child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
      return
    }
    child.once('close', (code, signal) => { resolve({ code, signal }) })
  })
}

/** Rejects with `message` when `promise` has not settled within `ms`. */
export async function within<T> (ms: number, message: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`${message} (waited ${ms} ms)`)) }, ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export interface CliResult extends Exit {
  stdout: string
  stderr: string
}

const CLI_TIMEOUT_MS = 30_000

/** Runs `src/bin/cli.ts` with `args` to completion (killed after 30 s) and returns what it printed. */
export async function runCli (args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawnTsx('src/bin/cli.ts', args, env)
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

/** The ids of the processes `pid` has started and that still run (Linux: /proc); none once it has exited. */
export function childPids (pid: number | undefined): number[] {
  if (pid === undefined) return []
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((id) => id !== '').map(Number)
  } catch {
    return []
  }
}

/** A port nothing listens on right now (the OS picks it; it is released before returning). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  if (address === null || typeof address === 'string') throw new Error('could not find a free port')
  return address.port
}

/**
 * What a server process runs: `src/bin/server.ts` through tsx (the default), or the build,
 * `dist/bin/server.js` (run `npm run build` first), as production runs it.
 */
export type ServerEntry = 'source' | 'build'

/** One server process: `src/bin/server.ts`, or `dist/bin/server.js` for the entry `build`. */
export class ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly baseUrl: string
  /** Settles when the process has exited and its output has been read to the end. */
  readonly exited: Promise<Exit>
  #stdout = ''
  #stderr = ''
  readonly #waiters = new Set<() => void>()

  constructor (env: NodeJS.ProcessEnv, port: number, entry: ServerEntry = 'source') {
    this.port = port
    this.baseUrl = `http://127.0.0.1:${port}`
    this.child = entry === 'build'
      ? spawn(process.execPath, ['dist/bin/server.js'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawnTsx('src/bin/server.ts', [], env)
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { this.#stdout += chunk; this.#notify() })
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#stderr += chunk; this.#notify() })
    this.exited = exitOf(this.child)
    this.child.once('close', () => { this.#notify() })
  }

  get stdout (): string { return this.#stdout }
  get stderr (): string { return this.#stderr }
  get running (): boolean { return this.child.exitCode === null && this.child.signalCode === null }

  /** Resolves with the first match of `pattern` in stdout, waiting for it at most `ms`. */
  async waitForStdout (pattern: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
    return within(ms, `server stdout never matched ${String(pattern)}; stdout:\n${this.#stdout}\nstderr:\n${this.#stderr}`, new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.#stdout)
        if (match !== null) {
          this.#waiters.delete(check)
          resolve(match)
        } else if (!this.running) {
          this.#waiters.delete(check)
          reject(new Error(`server exited before stdout matched ${String(pattern)}; stderr:\n${this.#stderr}`))
        }
      }
      this.#waiters.add(check)
      check()
    }))
  }

  /** Polls `GET /healthz` until it answers 200, for at most `ms`. */
  async waitUntilHealthy (ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`server exited before it was healthy; stderr:\n${this.#stderr}`)
      try {
        const res = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(1_000) })
        if (res.status === 200) return
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`server did not answer /healthz within ${ms} ms; stdout:\n${this.#stdout}\nstderr:\n${this.#stderr}`)
  }

  /** Sends SIGTERM and waits (at most `ms`) for the process to exit. */
  async stop (ms = 10_000): Promise<Exit> {
    this.child.kill('SIGTERM')
    return this.waitForExit(ms)
  }

  async waitForExit (ms = 10_000): Promise<Exit> {
    return within(ms, `server (pid ${String(this.child.pid)}) did not exit`, this.exited)
  }

  /** Kills the process, and its children (a cluster primary's workers), if it still runs; used by the cleanup. */
  async kill (): Promise<void> {
    if (this.running) {
      for (const pid of childPids(this.child.pid)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone already
        }
      }
      this.child.kill('SIGKILL')
    }
    await within(5_000, `server (pid ${String(this.child.pid)}) survived SIGKILL`, this.exited)
  }

  #notify (): void {
    for (const waiter of [...this.#waiters]) waiter()
  }
}

export interface ServerProcesses {
  /** Spawns a server on a free port without waiting for it. */
  spawn (env: Record<string, string>): Promise<ServerProcess>
  /** Spawns a server on a free port and waits until `/healthz` answers. */
  start (env: Record<string, string>): Promise<ServerProcess>
}

/**
 * Starts servers for one test and kills whichever still run when it ends.
 * Call it before `tempDir(t)`: cleanups run in the order they were registered,
 * so the processes are gone before their directory is removed.
 */
export function serverProcesses (t: TestContext, options: { entry?: ServerEntry } = {}): ServerProcesses {
  const started: ServerProcess[] = []
  t.after(async () => { await Promise.all(started.map((server) => server.kill())) })
  const spawnServer = async (env: Record<string, string>): Promise<ServerProcess> => {
    const port = await freePort()
    const server = new ServerProcess(childEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env, PORT: env.PORT ?? String(port) }), port, options.entry)
    started.push(server)
    return server
  }
  return {
    spawn: spawnServer,
    async start (env) {
      const server = await spawnServer(env)
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
