/**
 * Benchmark: `npm run bench` (full) or `npm run bench -- --quick` (the short version CI runs).
 *
 * Builds the service (`npm run build`) and runs the production build (`node dist/bin/server.js`) with
 * production defaults — API keys checked, requests validated, request logging at `info` (its
 * stdout goes to /dev/null) — on fresh stores seeded with 100,000 pets of mixed statuses, and, in
 * the same run, a baseline: a bare `node:http` server answering every request with a constant,
 * pre-serialized page of 20 pets (bench/baseline-server.ts). Every figure is also given as a
 * ratio to that baseline, measured at the start and again at the end of the run, because the
 * machine is shared and noisy and absolute numbers from different runs do not compare.
 *
 * Each server runs pinned to CPU 0 (`taskset -c 0`); this process, which is the load generator
 * (autocannon, in-process), re-executes itself pinned to CPU 1. 50 connections, a warm-up run
 * then a timed run, every request with a valid bearer key. Per-key rate limiting is off
 * (`RATE_LIMIT_MAX=0`): one key drives all 50 connections.
 *
 * Scenarios on SQLite and on PostgreSQL (skipped, saying so, when unreachable): list
 * `limit=20&status=available`, a deep page (cursor near the end), durable create, the deprecated
 * get by id, a 90/10 list/create mix. Plus, on SQLite: list at 1,000 vs 1,000,000 pets (quick:
 * 100,000), cold start (spawn to first 200 from `GET /v1/pets`), idle and loaded RSS, and
 * `WORKERS=2` against one process.
 *
 * Prints a table and writes it to bench/results/latest.json and latest.md. It never fails on a
 * number: it exits non-zero only when the harness itself could not run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus, platform, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'
import { CursorCodec } from '../src/pagination/cursor.js'
import { scratchStore, withPostgres } from '../test/helpers/databases.js'
import { freePort, within } from '../test/helpers/processes.js'

// ---------------------------------------------------------------------------------------------
// Settings

const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url))
const RESULTS_DIR = join(PROJECT_ROOT, 'bench', 'results')
const PINNED_FLAG = 'PETSTORE_BENCH_PINNED'
const SERVER_CPU = '0'
const LOADGEN_CPU = '1'
const CONNECTIONS = 50
const SEED_PETS = 100_000
const SMALL_STORE_PETS = 1_000
const STARTUP_TIMEOUT_MS = 60_000
const SHUTDOWN_TIMEOUT_MS = 20_000
const RSS_SAMPLE_MS = 250
const MB = 1024 * 1024
const LIST_PATH = '/v1/pets?limit=20&status=available'
const CREATE_BODY = JSON.stringify({ name: 'Bench pet', categoryId: 3, status: 'available' })

/** Settings a developer's shell may carry that would change what the service does. */
const SERVICE_VARIABLES = [
  'PORT', 'HOST', 'DATABASE_URL', 'PETSTORE_API_KEYS', 'PUBLIC_BASE_URL', 'STAGING_BASE_URL', 'LOG_LEVEL', 'DATABASE_POOL_SIZE', 'DATABASE_TIMEOUT_MS',
  'API_KEY_CACHE_SECONDS', 'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW', 'AUTH_FAILURE_LIMIT', 'REDIS_URL', 'CORS_ORIGINS', 'METRICS_PORT', 'TRUST_PROXY', 'WORKERS'
]

interface Plan {
  quick: boolean
  warmupSeconds: number
  durationSeconds: number
  coldStarts: number
  bigStorePets: number
}

function planFor (quick: boolean): Plan {
  return quick
    ? { quick, warmupSeconds: 1, durationSeconds: 3, coldStarts: 1, bigStorePets: 100_000 }
    : { quick, warmupSeconds: 3, durationSeconds: 10, coldStarts: 3, bigStorePets: 1_000_000 }
}

// ---------------------------------------------------------------------------------------------
// Processes

const TASKSET = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
const CORES = cpus().length
/** Pinning needs taskset and two cores: one for the servers, one for the load generator. */
const PINNING = TASKSET && CORES >= 2

const log = (line: string): void => { process.stderr.write(`bench: ${line}\n`) }
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface Exit { code: number | null, signal: NodeJS.Signals | null }

/** A server process (the service or the baseline), optionally pinned with taskset (which execs: same pid). */
class Proc {
  readonly child: ChildProcess
  readonly exited: Promise<Exit>
  #stderr = ''
  #stdout = ''

  constructor (readonly label: string, args: string[], env: NodeJS.ProcessEnv, cpuList: string | undefined, keepStdout = false) {
    const command = PINNING && cpuList !== undefined ? ['taskset', '-c', cpuList, ...args] : args
    this.child = spawn(command[0] as string, command.slice(1), {
      cwd: PROJECT_ROOT,
      env,
      // the service logs every request at info: that work is measured, its output discarded
      stdio: ['ignore', keepStdout ? 'pipe' : 'ignore', 'pipe']
    })
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { this.#stdout = (this.#stdout + chunk).slice(-8_000) })
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#stderr = (this.#stderr + chunk).slice(-8_000) })
    this.exited = new Promise((resolve) => { this.child.once('close', (code, signal) => { resolve({ code, signal }) }) })
    live.add(this)
    this.exited.then(() => live.delete(this), () => {})
  }

  get pid (): number { return this.child.pid ?? -1 }
  get running (): boolean { return this.child.exitCode === null && this.child.signalCode === null }
  get stderr (): string { return this.#stderr }
  get stdout (): string { return this.#stdout }

  /** Pids of this process's children (cluster workers, if any). */
  children (): number[] {
    try {
      return readFileSync(`/proc/${this.pid}/task/${this.pid}/children`, 'utf8').trim().split(/\s+/).filter((s) => s !== '').map(Number)
    } catch {
      const ps = spawnSync('ps', ['--ppid', String(this.pid), '-o', 'pid='], { encoding: 'utf8' })
      return ps.status === 0 ? ps.stdout.trim().split(/\s+/).filter((s) => s !== '').map(Number) : []
    }
  }

  /** Resident memory of the process and its children, MB; undefined where /proc is not there. */
  rssMb (): number | undefined {
    let total = 0
    for (const pid of [this.pid, ...this.children()]) {
      const kb = vmRssKb(pid)
      if (kb === undefined) return undefined
      total += kb
    }
    return total / 1024
  }

  async stop (): Promise<Exit> {
    if (!this.running) return this.exited
    this.child.kill('SIGTERM')
    try {
      return await within(SHUTDOWN_TIMEOUT_MS, `${this.label} (pid ${this.pid}) did not exit after SIGTERM`, this.exited)
    } catch (error) {
      await this.kill()
      throw error
    }
  }

  async kill (): Promise<void> {
    for (const pid of this.children()) {
      try { process.kill(pid, 'SIGKILL') } catch { /* gone already */ }
    }
    if (this.running) this.child.kill('SIGKILL')
    await within(5_000, `${this.label} (pid ${this.pid}) survived SIGKILL`, this.exited)
  }
}

const live = new Set<Proc>()

function vmRssKb (pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/** Samples a process's RSS until stopped; keeps the largest. */
class RssSampler {
  maxMb: number | undefined
  readonly #timer: NodeJS.Timeout
  constructor (readonly proc: Proc) {
    this.#sample()
    this.#timer = setInterval(() => { this.#sample() }, RSS_SAMPLE_MS)
  }

  #sample (): void {
    const mb = this.proc.rssMb()
    if (mb !== undefined && (this.maxMb === undefined || mb > this.maxMb)) this.maxMb = mb
  }

  stop (): number | undefined {
    clearInterval(this.#timer)
    this.#sample()
    return this.maxMb
  }
}

// ---------------------------------------------------------------------------------------------
// The service and the baseline

interface Service {
  proc: Proc
  baseUrl: string
}

function serviceEnv (overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of SERVICE_VARIABLES) delete env[name]
  delete env[PINNED_FLAG]
  return {
    ...env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    // one key drives all 50 connections; with the default 6000 a minute the run would measure 429s
    RATE_LIMIT_MAX: '0',
    ...overrides
  }
}

/** Spawns `node dist/bin/server.js` pinned to `cpuList`; does not wait. */
async function spawnService (databaseUrl: string, apiKey: string, cpuList = SERVER_CPU, extra: Record<string, string> = {}): Promise<Service> {
  const port = await freePort()
  const proc = new Proc('the service', [process.execPath, 'dist/bin/server.js'],
    serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: apiKey, ...extra }), cpuList)
  return { proc, baseUrl: `http://127.0.0.1:${port}` }
}

async function startService (databaseUrl: string, apiKey: string, cpuList = SERVER_CPU, extra: Record<string, string> = {}): Promise<Service> {
  const service = await spawnService(databaseUrl, apiKey, cpuList, extra)
  await waitForStatus(service.proc, `${service.baseUrl}/readyz`, {}, 50)
  return service
}

/** Polls `url` every `intervalMs` until it answers 200; returns ms since `since`. */
async function waitForStatus (proc: Proc, url: string, headers: Record<string, string>, intervalMs: number, since = performance.now()): Promise<number> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  for (;;) {
    if (!proc.running) throw new Error(`${proc.label} exited before it answered ${url}; stderr:\n${proc.stderr}`)
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) })
      await response.arrayBuffer()
      if (response.status === 200) return performance.now() - since
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${proc.label} did not answer ${url} with 200 within ${STARTUP_TIMEOUT_MS} ms; stderr:\n${proc.stderr}`)
    await sleep(intervalMs)
  }
}

async function startBaseline (): Promise<Service> {
  const port = await freePort()
  const env = serviceEnv({ PORT: String(port) })
  const proc = new Proc('the baseline server', [process.execPath, '--import', 'tsx', 'bench/baseline-server.ts'], env, SERVER_CPU, true)
  const baseUrl = `http://127.0.0.1:${port}`
  await waitForStatus(proc, `${baseUrl}/`, {}, 50)
  return { proc, baseUrl }
}

// ---------------------------------------------------------------------------------------------
// Stores

type StoreKind = 'sqlite' | 'postgres'

interface Store {
  kind: StoreKind
  url: string
  pets: number
}

type Cleanups = Array<() => Promise<void>>

function postgresServerUrl (): string {
  const candidates = [process.env.TEST_DATABASE_URL, process.env.DATABASE_URL].map((value) => value?.trim()).filter((value) => value !== undefined && value !== '')
  return candidates.find((value) => value !== undefined && /^postgres(ql)?:\/\//.test(value)) ?? 'postgres://postgres@127.0.0.1:5432/test'
}

/** Whether PostgreSQL answers; the reason when it does not. */
async function postgresProblem (serverUrl: string): Promise<string | undefined> {
  try {
    await within(8_000, 'no answer', withPostgres((client) => client.query('SELECT 1'), serverUrl))
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

async function freshStoreUrl (kind: StoreKind, cleanups: Cleanups, pgServerUrl: string): Promise<string> {
  const scratch = await scratchStore(kind, 'bench', pgServerUrl)
  cleanups.push(scratch.drop)
  return scratch.url
}

// half available, a fifth pending, three tenths sold, interleaved
const STATUS_SQL = (x: string): string => `CASE WHEN ${x} % 10 < 5 THEN 'available' WHEN ${x} % 10 < 7 THEN 'pending' ELSE 'sold' END`

/**
 * A fresh store with `pets` pets: the service migrates it (started once, then stopped), and the
 * pets are inserted directly, in one transaction — through HTTP, 1,000,000 creates would take hours.
 */
async function seededStore (kind: StoreKind, pets: number, apiKey: string, cleanups: Cleanups, pgServerUrl: string): Promise<Store> {
  const url = await freshStoreUrl(kind, cleanups, pgServerUrl)
  const migrating = await startService(url, apiKey)
  await migrating.proc.stop()
  const started = performance.now()
  if (kind === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length), { fileMustExist: true })
    try {
      db.transaction(() => {
        db.prepare(`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
          INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || x, 1 + x % 5, ${STATUS_SQL('x')} FROM seq`).run(pets)
      })()
      db.pragma('wal_checkpoint(TRUNCATE)')
    } finally {
      db.close()
    }
  } else {
    await withPostgres(async (client) => {
      await client.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || x, 1 + x % 5, ${STATUS_SQL('x')} FROM generate_series(1, $1::int) AS x`, [pets])
      // what autovacuum would do within a minute anyway; done now so it does not run during a measurement
      await client.query('VACUUM ANALYZE pets')
    }, url)
  }
  log(`${kind}: seeded ${pets.toLocaleString('en-US')} pets in ${Math.round(performance.now() - started)} ms`)
  return { kind, url, pets }
}

async function storeQuery<T extends Record<string, unknown>> (store: Store, sql: string, params: unknown[] = []): Promise<T[]> {
  if (store.kind === 'sqlite') {
    const db = new Database(store.url.slice('sqlite:'.length), { readonly: true, fileMustExist: true })
    try {
      return db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[]
    } finally {
      db.close()
    }
  }
  return withPostgres(async (client) => (await client.query(sql, params)).rows as T[], store.url)
}

interface StoreFacts {
  minId: number
  maxId: number
  /** `LIST_PATH` with a cursor 40 available pets before the end: a full page with a next link. */
  deepPagePath: string
}

/** Ids to read, and a deep-page cursor signed with the store's own secret (what paging there would get). */
async function storeFacts (store: Store): Promise<StoreFacts> {
  const [range] = await storeQuery<{ min_id: number | string, max_id: number | string }>(store, 'SELECT min(id) AS min_id, max(id) AS max_id FROM pets')
  const [deep] = await storeQuery<{ id: number | string }>(store, "SELECT id FROM pets WHERE status = 'available' ORDER BY id DESC LIMIT 1 OFFSET 40")
  const [secret] = await storeQuery<{ value: string }>(store, "SELECT value FROM settings WHERE name = 'cursor_secret'")
  if (range === undefined || deep === undefined || secret === undefined) throw new Error(`${store.kind}: the seeded store has no pets or no cursor secret`)
  const cursor = new CursorCodec(secret.value).encode({ afterId: Number(deep.id), status: 'available' })
  return { minId: Number(range.min_id), maxId: Number(range.max_id), deepPagePath: `${LIST_PATH}&cursor=${encodeURIComponent(cursor)}` }
}

/** One request by hand, to prove a scenario's request is answered as it should be before loading it. */
async function expectStatus (service: Service, apiKey: string, path: string, status: number, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(`${service.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${apiKey}`, ...(init.headers as Record<string, string> | undefined) }, signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  if (response.status !== status) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}, expected ${status}: ${text.slice(0, 300)}`)
  return JSON.parse(text) as unknown
}

// ---------------------------------------------------------------------------------------------
// Load

interface LoadResult {
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  /** Largest RSS of the server during the timed run. */
  rssMb: number | undefined
  requests: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
}

async function cannon (options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error: unknown, result) => {
      if (error !== null && error !== undefined) reject(error instanceof Error ? error : new Error(String(error)))
      else resolve(result)
    })
  })
}

/** A warm-up run, then the timed run with the server's RSS sampled. */
async function measure (plan: Plan, server: Service, apiKey: string, shape: Partial<autocannon.Options>): Promise<LoadResult> {
  const options: autocannon.Options = {
    url: `${server.baseUrl}${LIST_PATH}`,
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${apiKey}` },
    timeout: 10,
    ...shape
  }
  await cannon({ ...options, duration: plan.warmupSeconds })
  const sampler = new RssSampler(server.proc)
  const result = await cannon({ ...options, duration: plan.durationSeconds })
  const rssMb = sampler.stop()
  if (!server.proc.running) throw new Error(`${server.proc.label} exited during the run; stderr:\n${server.proc.stderr}`)
  const statusCodes: Record<string, number> = {}
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0
  return {
    reqPerSec: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    rssMb,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes
  }
}

type ScenarioName = 'list-available' | 'deep-page' | 'get-by-id' | 'create' | 'mix-90-10'

function scenarioShape (name: ScenarioName, apiKey: string, facts: StoreFacts): Partial<autocannon.Options> {
  const auth = { authorization: `Bearer ${apiKey}` }
  const createRequest: autocannon.Request = { method: 'POST', path: '/v1/pets', body: CREATE_BODY, headers: { ...auth, 'content-type': 'application/json' } }
  switch (name) {
    case 'list-available': return {}
    case 'deep-page': return { requests: [{ method: 'GET', path: facts.deepPagePath, headers: auth }] }
    case 'get-by-id': {
      const span = facts.maxId - facts.minId + 1
      return {
        requests: [{
          method: 'GET',
          headers: auth,
          setupRequest: (request: autocannon.Request) => ({ ...request, path: `/v1/pets/${facts.minId + Math.floor(Math.random() * span)}` })
        }]
      }
    }
    case 'create': return { requests: [createRequest] }
    case 'mix-90-10': return { requests: [...Array.from({ length: 9 }, (): autocannon.Request => ({ method: 'GET', path: LIST_PATH, headers: auth })), createRequest] }
  }
}

const SCENARIOS: ScenarioName[] = ['list-available', 'deep-page', 'get-by-id', 'create', 'mix-90-10']

// ---------------------------------------------------------------------------------------------
// Report

interface Row {
  scenario: string
  store: string
  result?: LoadResult
  /** Why there is no result. */
  error?: string
  ratio?: number
  target?: string
  met?: boolean
}

interface Check {
  check: string
  measured: string
  target: string
  met: boolean | undefined
}

const fmt = (value: number | undefined, digits = 0): string => value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)
const verdict = (met: boolean | undefined): string => met === undefined ? '–' : met ? 'met' : '**missed**'

function markdown (report: Report): string {
  const lines: string[] = []
  lines.push(`# Benchmark ${report.quick ? '(quick)' : '(full)'} — ${report.machine.date}`, '')
  lines.push(`${report.machine.cpuModel}, ${report.machine.cores} cores, Node ${report.machine.node}, ${report.machine.os}. ` +
    `${CONNECTIONS} connections, warm-up ${report.settings.warmupSeconds} s, timed run ${report.settings.durationSeconds} s per row. ` +
    `Baseline (bare node:http, constant 20-pet array): ${fmt(report.baseline.start)} req/s at the start, ${fmt(report.baseline.end)} at the end; ratios use their mean, ${fmt(report.baseline.mean)}.`, '')
  lines.push('| scenario | store | req/s | p50 ms | p99 ms | RSS MB | × baseline | target | met | non-2xx / errors |')
  lines.push('|---|---|--:|--:|--:|--:|--:|---|---|--:|')
  for (const row of report.rows) {
    const r = row.result
    if (r === undefined) {
      lines.push(`| ${row.scenario} | ${row.store} | failed: ${(row.error ?? '').split('\n')[0]?.slice(0, 120) ?? ''} | | | | | ${row.target ?? ''} | – | |`)
      continue
    }
    lines.push(`| ${row.scenario} | ${row.store} | ${fmt(r.reqPerSec)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${fmt(r.rssMb, 1)} | ${fmt(row.ratio, 2)} | ${row.target ?? ''} | ${row.target === undefined ? '' : verdict(row.met)} | ${r.non2xx} / ${r.errors} |`)
  }
  lines.push('', '| check | measured | target | result |', '|---|---|---|---|')
  for (const check of report.checks) lines.push(`| ${check.check} | ${check.measured} | ${check.target} | ${verdict(check.met)} |`)
  lines.push('', 'Notes:', '')
  for (const note of report.notes) lines.push(`- ${note}`)
  return `${lines.join('\n')}\n`
}

interface Report {
  quick: boolean
  machine: { cpuModel: string, cores: number, node: string, os: string, totalMemoryMb: number, date: string }
  settings: { connections: number, warmupSeconds: number, durationSeconds: number, pinned: boolean, serverCpu: string | null, loadGeneratorCpu: string | null, seedPets: number, bigStorePets: number }
  baseline: { start: number | undefined, end: number | undefined, mean: number | undefined, startResult?: LoadResult, endResult?: LoadResult }
  rows: Row[]
  checks: Check[]
  coldStartMs: number[]
  idleRssMb: Record<string, number | undefined>
  workers: { implemented: boolean | undefined, childProcesses: number | undefined }
  notes: string[]
  harnessErrors: string[]
}

// ---------------------------------------------------------------------------------------------
// The run

async function build (): Promise<void> {
  log('npm run build')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const child = spawn(npm, ['run', 'build', '--silent'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  if (code !== 0) throw new Error(`npm run build exited with ${String(code)}`)
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'server.js'))) throw new Error('npm run build did not produce dist/bin/server.js')
}

async function bench (plan: Plan, cleanups: Cleanups): Promise<Report> {
  const apiKey = `bench_${randomBytes(32).toString('base64url')}`
  const pgServerUrl = postgresServerUrl()
  const report: Report = {
    quick: plan.quick,
    machine: { cpuModel: cpus()[0]?.model ?? 'unknown', cores: CORES, node: process.version, os: `${platform()} ${release()}`, totalMemoryMb: Math.round(totalmem() / MB), date: new Date().toISOString() },
    settings: {
      connections: CONNECTIONS,
      warmupSeconds: plan.warmupSeconds,
      durationSeconds: plan.durationSeconds,
      pinned: PINNING,
      serverCpu: PINNING ? SERVER_CPU : null,
      loadGeneratorCpu: PINNING ? LOADGEN_CPU : null,
      seedPets: SEED_PETS,
      bigStorePets: plan.bigStorePets
    },
    baseline: { start: undefined, end: undefined, mean: undefined },
    rows: [],
    checks: [],
    coldStartMs: [],
    idleRssMb: {},
    workers: { implemented: undefined, childProcesses: undefined },
    notes: [],
    harnessErrors: []
  }
  const notes = report.notes
  notes.push(PINNING
    ? `Servers pinned to CPU ${SERVER_CPU} (taskset -c ${SERVER_CPU}), the load generator (autocannon, in this process) to CPU ${LOADGEN_CPU}.`
    : `NOT pinned: ${TASKSET ? `only ${CORES} core(s)` : 'taskset is not installed'}; servers and load generator share the CPUs, so figures are noisier.`)
  notes.push('The service runs as built (node dist/bin/server.js) with production defaults: API keys checked, validation on, request logging at info (stdout to /dev/null).')
  notes.push('Per-key rate limiting is OFF for the benchmark (RATE_LIMIT_MAX=0): one key drives all 50 connections, and the default 6000/min would make it measure 429s.')
  notes.push(`Stores are seeded directly (SQL, one transaction) with ${SEED_PETS.toLocaleString('en-US')} pets, 50 % available, 20 % pending, 30 % sold; PostgreSQL gets VACUUM ANALYZE after seeding.`)
  notes.push('The deep page uses a cursor 40 available pets before the end of the store, signed with the store\'s own cursor secret (as paging there would issue it); it is checked with one request before the run.')
  notes.push('Creates are durable (SQLite synchronous=FULL, PostgreSQL synchronous_commit=on) and sent without Idempotency-Key; the mix is 9 lists then 1 create on every connection.')
  notes.push('RSS is VmRSS from /proc (process and children), sampled every 250 ms; the RSS column is the largest sample during that row\'s timed run.')
  notes.push('autocannon records latencies in whole milliseconds, so p50/p99 of 0–1 ms (the baseline) are at its resolution.')
  notes.push('The baseline server runs through the tsx loader (bench/baseline-server.ts); that only costs start-up time and memory (its RSS is not a target), not per-request work.')
  if (plan.quick) notes.push(`Quick run: warm-up ${plan.warmupSeconds} s, timed ${plan.durationSeconds} s, 1 cold start, and list cost compares 1,000 with 100,000 pets (not 1,000,000). Figures are indicative only.`)

  const baselineRun = async (): Promise<LoadResult> => {
    const baseline = await startBaseline()
    try {
      return await measure(plan, baseline, apiKey, {})
    } finally {
      await baseline.proc.stop()
    }
  }
  const row = (scenario: string, store: string): Row => {
    const r: Row = { scenario, store }
    report.rows.push(r)
    return r
  }
  const attempt = async (target: Row, work: () => Promise<LoadResult>): Promise<void> => {
    try {
      target.result = await work()
      const r = target.result
      log(`${target.scenario} (${target.store}): ${fmt(r.reqPerSec)} req/s, p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms, RSS ${fmt(r.rssMb, 1)} MB, non-2xx ${r.non2xx}, errors ${r.errors}`)
    } catch (error) {
      target.error = error instanceof Error ? error.message : String(error)
      report.harnessErrors.push(`${target.scenario} (${target.store}): ${target.error}`)
      log(`${target.scenario} (${target.store}) FAILED: ${target.error}`)
    }
  }

  // 1. baseline
  log('baseline (start)')
  const baselineStartRow = row('baseline (start)', 'none')
  await attempt(baselineStartRow, baselineRun)
  report.baseline.startResult = baselineStartRow.result
  report.baseline.start = baselineStartRow.result?.reqPerSec

  // 2. each store
  const pgProblem = await postgresProblem(pgServerUrl)
  if (pgProblem !== undefined) notes.push(`PostgreSQL SKIPPED: ${pgServerUrl.replace(/\/\/[^@/]*@/, '//…@')} is unreachable (${pgProblem}). Set TEST_DATABASE_URL to run it.`)
  const stores: StoreKind[] = pgProblem === undefined ? ['sqlite', 'postgres'] : ['sqlite']
  let sqliteStore: Store | undefined
  for (const kind of stores) {
    const storeCleanups: Cleanups = []
    try {
      log(`${kind}: preparing a store of ${SEED_PETS.toLocaleString('en-US')} pets`)
      const store = await seededStore(kind, SEED_PETS, apiKey, kind === 'sqlite' ? cleanups : storeCleanups, pgServerUrl)
      if (kind === 'sqlite') sqliteStore = store
      const facts = await storeFacts(store)
      const service = await startService(store.url, apiKey)
      try {
        await sleep(1_000)
        report.idleRssMb[kind] = service.proc.rssMb()
        const deep = await expectStatus(service, apiKey, facts.deepPagePath, 200)
        if (!Array.isArray(deep) || deep.length !== 20) throw new Error(`the deep page answered ${Array.isArray(deep) ? deep.length : 'no'} pets, expected 20`)
        await expectStatus(service, apiKey, `/v1/pets/${facts.maxId}`, 200)
        for (const scenario of SCENARIOS) {
          log(`${scenario} (${kind})`)
          await attempt(row(scenario, kind), () => measure(plan, service, apiKey, scenarioShape(scenario, apiKey, facts)))
        }
      } finally {
        await service.proc.stop()
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      report.harnessErrors.push(`${kind}: ${message}`)
      log(`${kind} FAILED: ${message}`)
    } finally {
      for (const cleanup of storeCleanups.reverse()) await cleanup().catch((error: unknown) => { log(`cleanup failed: ${String(error)}`) })
    }
  }

  // 3. cold start and WORKERS=2, on the SQLite store (already migrated and seeded)
  if (sqliteStore !== undefined) {
    const store = sqliteStore
    try {
      for (let i = 0; i < plan.coldStarts; i++) {
        const started = performance.now()
        const service = await spawnService(store.url, apiKey)
        try {
          const ms = await waitForStatus(service.proc, `${service.baseUrl}${LIST_PATH}`, { authorization: `Bearer ${apiKey}` }, 5, started)
          report.coldStartMs.push(ms)
          log(`cold start ${i + 1}/${plan.coldStarts}: ${fmt(ms)} ms`)
        } finally {
          await service.proc.stop()
        }
      }
    } catch (error) {
      report.harnessErrors.push(`cold start: ${error instanceof Error ? error.message : String(error)}`)
    }

    const workersRow = row('list-available, WORKERS=2', 'sqlite')
    await attempt(workersRow, async () => {
      const service = await startService(store.url, apiKey, PINNING ? `${SERVER_CPU},${LOADGEN_CPU}` : undefined, { WORKERS: '2' })
      try {
        await sleep(1_000)
        const children = service.proc.children().length
        report.workers = { implemented: children >= 2, childProcesses: children }
        if (children < 2) workersRow.scenario = 'list-available, WORKERS=2 (not implemented yet: same as one process)'
        const facts = await storeFacts(store)
        return await measure(plan, service, apiKey, scenarioShape('list-available', apiKey, facts))
      } finally {
        await service.proc.stop()
      }
    })
    notes.push(report.workers.implemented === true
      ? `WORKERS=2: the service forked ${report.workers.childProcesses ?? 0} worker processes.`
      : `WORKERS=2: the service ignores WORKERS (${report.workers.childProcesses ?? '?'} child processes after start), so that row measures one process again.`)
    if (PINNING) notes.push(`WORKERS=2 runs on CPUs ${SERVER_CPU},${LOADGEN_CPU}: with ${CORES} cores the load generator shares CPU ${LOADGEN_CPU} with the second worker, so 1.6× is out of reach on this machine even when implemented.`)
  }

  // 4. list cost: small vs big store (SQLite)
  const listCost: Record<string, LoadResult | undefined> = {}
  for (const pets of [SMALL_STORE_PETS, plan.bigStorePets]) {
    const label = `list-available, ${pets.toLocaleString('en-US')} pets`
    const costRow = row(label, 'sqlite')
    await attempt(costRow, async () => {
      const storeCleanups: Cleanups = []
      try {
        const store = await seededStore('sqlite', pets, apiKey, storeCleanups, pgServerUrl)
        const facts = await storeFacts(store)
        const service = await startService(store.url, apiKey)
        try {
          return await measure(plan, service, apiKey, scenarioShape('list-available', apiKey, facts))
        } finally {
          await service.proc.stop()
        }
      } finally {
        for (const cleanup of storeCleanups.reverse()) await cleanup()
      }
    })
    listCost[String(pets)] = costRow.result
  }

  // 5. baseline again: how much the machine drifted during the run
  log('baseline (end)')
  const baselineEndRow = row('baseline (end)', 'none')
  await attempt(baselineEndRow, baselineRun)
  report.baseline.endResult = baselineEndRow.result
  report.baseline.end = baselineEndRow.result?.reqPerSec
  const baselines = [report.baseline.start, report.baseline.end].filter((v): v is number => v !== undefined)
  report.baseline.mean = baselines.length === 0 ? undefined : baselines.reduce((a, b) => a + b, 0) / baselines.length

  // 6. ratios and targets
  const mean = report.baseline.mean
  for (const r of report.rows) {
    if (r.result !== undefined && mean !== undefined) r.ratio = r.result.reqPerSec / mean
  }
  const find = (scenario: string, store: string): Row | undefined => report.rows.find((r) => r.scenario === scenario && r.store === store)
  const ratioTarget = (scenario: string, store: string, min: number): void => {
    const r = find(scenario, store)
    if (r === undefined) return
    r.target = `≥ ${min.toFixed(2)}× baseline`
    r.met = r.ratio === undefined ? undefined : r.ratio >= min
    report.checks.push({ check: `${scenario} (${store}) vs baseline`, measured: `${fmt(r.ratio, 2)}×`, target: `≥ ${min.toFixed(2)}×`, met: r.met })
  }
  ratioTarget('list-available', 'sqlite', 0.45)
  ratioTarget('get-by-id', 'sqlite', 0.60)
  ratioTarget('create', 'sqlite', 0.30)
  ratioTarget('list-available', 'postgres', 0.25)
  ratioTarget('create', 'postgres', 0.25)
  for (const kind of stores) {
    const list = find('list-available', kind)?.result
    if (list !== undefined) report.checks.push({ check: `p99 of list-available (${kind})`, measured: `${fmt(list.p99Ms, 1)} ms`, target: '≤ 5 ms', met: list.p99Ms <= 5 })
    const deep = find('deep-page', kind)?.result
    const relative = list === undefined || deep === undefined ? undefined : deep.reqPerSec / list.reqPerSec
    report.checks.push({ check: `deep page vs first page (${kind}), req/s`, measured: `${fmt(relative, 2)}×`, target: 'within 10 % (≥ 0.90×)', met: relative === undefined ? undefined : relative >= 0.9 })
  }
  const small = listCost[String(SMALL_STORE_PETS)]
  const big = listCost[String(plan.bigStorePets)]
  const bigVsSmall = small === undefined || big === undefined ? undefined : big.reqPerSec / small.reqPerSec
  report.checks.push({
    check: `list at ${plan.bigStorePets.toLocaleString('en-US')} vs ${SMALL_STORE_PETS.toLocaleString('en-US')} pets (sqlite), req/s${plan.quick ? ' (quick: 100,000 stands in for 1,000,000)' : ''}`,
    measured: `${fmt(bigVsSmall, 2)}×`,
    target: 'within 10 % (≥ 0.90×)',
    met: bigVsSmall === undefined ? undefined : bigVsSmall >= 0.9
  })
  const one = find('list-available', 'sqlite')?.result
  const two = report.rows.find((r) => r.scenario.startsWith('list-available, WORKERS=2'))?.result
  const workersRatio = one === undefined || two === undefined ? undefined : two.reqPerSec / one.reqPerSec
  report.checks.push({
    check: `WORKERS=2 vs one process, list-available (sqlite)${report.workers.implemented === true ? '' : ' — WORKERS not implemented yet'}`,
    measured: `${fmt(workersRatio, 2)}×`,
    target: '≥ 1.6×',
    met: workersRatio === undefined ? undefined : workersRatio >= 1.6
  })
  const sorted = [...report.coldStartMs].sort((a, b) => a - b)
  const coldMedian = sorted.length === 0 ? undefined : sorted[Math.floor((sorted.length - 1) / 2)]
  report.checks.push({
    check: `cold start, spawn to first 200 from GET ${LIST_PATH} (sqlite, ${SEED_PETS.toLocaleString('en-US')} pets; median of ${report.coldStartMs.length})`,
    measured: `${fmt(coldMedian)} ms${report.coldStartMs.length > 1 ? ` (${report.coldStartMs.map((ms) => fmt(ms)).join(', ')})` : ''}`,
    target: '≤ 400 ms',
    met: coldMedian === undefined ? undefined : coldMedian <= 400
  })
  for (const kind of stores) {
    const idle = report.idleRssMb[kind]
    report.checks.push({ check: `idle RSS (${kind}), 1 s after ready, before load`, measured: `${fmt(idle, 1)} MB`, target: '≤ 80 MB', met: idle === undefined ? undefined : idle <= 80 })
    const loaded = find('list-available', kind)?.result?.rssMb
    report.checks.push({ check: `loaded RSS (${kind}), max during list-available`, measured: `${fmt(loaded, 1)} MB`, target: '–', met: undefined })
  }
  if (baselines.length === 2 && report.baseline.start !== undefined && report.baseline.end !== undefined) {
    const drift = report.baseline.end / report.baseline.start - 1
    notes.push(`Baseline drift over the run: ${(100 * drift).toFixed(1)} % (start ${fmt(report.baseline.start)}, end ${fmt(report.baseline.end)} req/s); ratios use the mean.`)
  }
  const withFailures = report.rows.filter((r) => r.result !== undefined && (r.result.non2xx > 0 || r.result.errors > 0))
  for (const r of withFailures) notes.push(`${r.scenario} (${r.store}) had ${r.result?.non2xx ?? 0} non-2xx answers (${JSON.stringify(r.result?.statusCodes)}) and ${r.result?.errors ?? 0} connection errors: its figures count them.`)
  notes.push('Targets are reported, never enforced: the run does not fail on a number.')
  return report
}

async function main (): Promise<number> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } }, allowPositionals: false })
  const quick = values.quick === true

  // the load generator on its own core: re-execute this script under taskset -c 1
  if (PINNING && process.env[PINNED_FLAG] === undefined) {
    const child = spawn('taskset', ['-c', LOADGEN_CPU, process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, [PINNED_FLAG]: '1' }
    })
    // the child gets the terminal's signals itself; forward the ones sent to this process alone
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { child.kill(signal) })
    return new Promise((resolve) => { child.once('close', (code, signal) => { resolve(code ?? (signal === null ? 1 : 130)) }) })
  }

  const plan = planFor(quick)
  const started = performance.now()
  const cleanups: Cleanups = []
  let interrupted = false
  const onSignal = (): void => {
    if (interrupted) return
    interrupted = true
    log('interrupted: cleaning up')
    cleanUp(cleanups).finally(() => { process.exit(130) })
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    log(`${quick ? 'quick' : 'full'} run; ${PINNING ? `servers on CPU ${SERVER_CPU}, load generator on CPU ${LOADGEN_CPU}` : 'taskset unavailable or one core: NOT pinned'}`)
    await build()
    const report = await bench(plan, cleanups)
    const md = markdown(report)
    await mkdir(RESULTS_DIR, { recursive: true })
    await writeFile(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify({ ...report, elapsedSeconds: Math.round((performance.now() - started) / 1000) }, null, 2)}\n`)
    await writeFile(join(RESULTS_DIR, 'latest.md'), md)
    process.stdout.write(`\n${md}\n`)
    log(`done in ${Math.round((performance.now() - started) / 1000)} s; wrote bench/results/latest.json and latest.md`)
    if (report.harnessErrors.length > 0) {
      log(`the harness could not measure everything:\n  ${report.harnessErrors.join('\n  ')}`)
      return 1
    }
    return 0
  } finally {
    await cleanUp(cleanups)
  }
}

async function cleanUp (cleanups: Cleanups): Promise<void> {
  await Promise.all([...live].map((proc) => proc.kill().catch((error: unknown) => { log(`could not kill ${proc.label}: ${String(error)}`) })))
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (error) {
      log(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  cleanUp([]).finally(() => { process.exit(1) })
})
