import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { join, resolve } from 'node:path'
import { pinnedCommand } from './cpu-pinning.js'
import { TSX_LOADER } from './installation.js'
import { exitOf, type Exit } from './process-exit.js'
import { childPids, processTree } from './process-tree.js'
import { PROJECT_ROOT } from './project-root.js'
import { within } from './within.js'

/**
 * What a server process runs: `src/bin/server.ts` through tsx (`source`), or the build,
 * `dist/bin/server.js` (`build`; run `npm run build` first), as production runs it.
 */
export type ServerEntry = 'source' | 'build'

/** How to start a {@link ServerProcess}. */
export interface ServerProcessOptions {
  /** The process's whole environment: start from `childEnv`. */
  env: NodeJS.ProcessEnv
  /** The port it listens on (its `PORT`, or the script's); gives {@link ServerProcess.baseUrl}. */
  port: number
  /** The service's entry point; `source` by default. */
  entry?: ServerEntry
  /** The installation it runs from (see `copyInstallation`); the repository by default. */
  installation?: string
  /** Its working directory; the installation by default. */
  cwd?: string
  /** A file to run instead of the service (a benchmark's baseline or peer): TypeScript through tsx, JavaScript as it is. */
  script?: string
  /** CPUs to pin it to (`taskset -c`), where pinning is available. */
  cpuList?: string
  /**
   * What becomes of its stdout: `keep` (default) keeps all of it in {@link ServerProcess.stdout};
   * `discard` sends it to /dev/null unread (a benchmark measures the logging, not its reader);
   * a function receives each line.
   */
  stdout?: 'keep' | 'discard' | ((line: string) => void)
  /** Its name in error messages; `server` by default. */
  label?: string
  /** The node binary; this process's by default (a release test runs one another user may execute). */
  node?: string
  /** The user and group it runs as (needs root); this process's by default. */
  runAs?: { uid: number, gid: number }
}

/** One server process: the service (source or build), or a script standing in for one. */
export class ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string
  readonly label: string
  /** Settles when the process has exited and its output has been read to the end. */
  readonly exited: Promise<Exit>
  #stdout = ''
  #partialLine = ''
  #stderr = ''
  readonly #waiters = new Set<() => void>()

  constructor (options: ServerProcessOptions) {
    this.port = options.port
    this.baseUrl = `http://127.0.0.1:${options.port}`
    this.label = options.label ?? 'server'
    const root = options.installation ?? PROJECT_ROOT
    const execPath = options.node ?? process.execPath
    const node = options.script !== undefined
      ? [execPath, ...options.script.endsWith('.ts') ? ['--import', TSX_LOADER] : [], resolve(root, options.script)]
      : options.entry === 'build' ? [execPath, join(root, 'dist/bin/server.js')] : [execPath, '--import', TSX_LOADER, join(root, 'src/bin/server.ts')]
    const [command, ...args] = pinnedCommand(options.cpuList, node)
    const stdout = options.stdout ?? 'keep'
    this.child = spawn(command as string, args, { cwd: options.cwd ?? root, env: options.env, ...options.runAs, stdio: ['ignore', stdout === 'discard' ? 'ignore' : 'pipe', 'pipe'] })
    const onLine = typeof stdout === 'function' ? stdout : undefined
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (onLine === undefined) this.#stdout += chunk
      else this.#readLines(chunk, onLine)
      this.#notify()
    })
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#stderr += chunk; this.#notify() })
    this.exited = exitOf(this.child).then((exit) => {
      if (onLine !== undefined && this.#partialLine !== '') onLine(this.#partialLine)
      return exit
    })
    this.child.once('close', () => { this.#notify() })
  }

  /** Everything written to stdout so far (with `stdout: 'keep'`). */
  get stdout (): string { return this.#stdout }
  get stderr (): string { return this.#stderr }
  get running (): boolean { return this.child.exitCode === null && this.child.signalCode === null }
  /** The process id (taskset execs the server, so it is the server's own); -1 when it could not start. */
  get pid (): number { return this.child.pid ?? -1 }

  /** The process and its children (a cluster primary's workers), for CPU and memory accounting. */
  processTree (): number[] {
    return this.running ? processTree(this.child.pid) : []
  }

  /** Resolves with the first match of `pattern` in stdout, waiting for it at most `ms`. */
  async waitForStdout (pattern: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
    return within(ms, `${this.label} stdout never matched ${String(pattern)}; stdout:\n${this.#stdout}\nstderr:\n${this.#stderr}`, new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.#stdout)
        if (match !== null) {
          this.#waiters.delete(check)
          resolve(match)
        } else if (!this.running) {
          this.#waiters.delete(check)
          reject(new Error(`${this.label} exited before stdout matched ${String(pattern)}; stderr:\n${this.#stderr}`))
        }
      }
      this.#waiters.add(check)
      check()
    }))
  }

  /**
   * Polls `GET <path>` every `intervalMs` until it answers 200, for at most `timeoutMs`; resolves
   * with the ms since `since` (a `performance.now()`, by default the call's start).
   */
  async waitForStatus (path: string, options: { headers?: Record<string, string>, intervalMs?: number, timeoutMs?: number, since?: number } = {}): Promise<number> {
    const since = options.since ?? performance.now()
    const timeoutMs = options.timeoutMs ?? 15_000
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (!this.running) throw new Error(`${this.label} exited before it answered ${path}; stderr:\n${this.#stderr}`)
      try {
        const response = await fetch(`${this.baseUrl}${path}`, { headers: options.headers, signal: AbortSignal.timeout(1_000) })
        await response.arrayBuffer()
        if (response.status === 200) return performance.now() - since
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${this.label} did not answer ${path} with 200 within ${timeoutMs} ms; stdout:\n${this.#stdout}\nstderr:\n${this.#stderr}`)
      await sleep(options.intervalMs ?? 100)
    }
  }

  /** Polls `GET /healthz` until it answers 200, for at most `ms`. */
  async waitUntilHealthy (ms = 15_000): Promise<void> {
    await this.waitForStatus('/healthz', { timeoutMs: ms })
  }

  /** Sends SIGTERM and waits (at most `ms`) for the process to exit. */
  async stop (ms = 10_000): Promise<Exit> {
    this.child.kill('SIGTERM')
    return this.waitForExit(ms)
  }

  async waitForExit (ms = 10_000): Promise<Exit> {
    return within(ms, `${this.label} (pid ${String(this.child.pid)}) did not exit`, this.exited)
  }

  /** Kills the process, and its children (a cluster primary's workers), if it still runs. */
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
    await within(5_000, `${this.label} (pid ${String(this.child.pid)}) survived SIGKILL`, this.exited)
  }

  #readLines (chunk: string, onLine: (line: string) => void): void {
    const lines = (this.#partialLine + chunk).split('\n')
    this.#partialLine = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  }

  #notify (): void {
    for (const waiter of [...this.#waiters]) waiter()
  }
}
