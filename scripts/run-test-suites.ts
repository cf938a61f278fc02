/**
 * The test suites (`npm run test:suites`): every `test/**\/*.test.ts` exactly once, in three groups run
 * one after the other, reported as one run by node:test's spec reporter with one closing summary
 * (`ℹ tests …` to `ℹ duration_ms …`, the lines CI reads) and a non-zero exit code when any test fails.
 *
 * - The concurrent group: files that share no port, database or timing budget (every test builds its
 *   own app on its own SQLite file or PostgreSQL schema; servers listen on free ports), run
 *   {@link CONCURRENCY} files at a time, the longest ({@link LONG_FILES}) first. `node --test` alone
 *   runs one file at a time on a 2-core machine.
 * - The paired group ({@link PAIRED_FILES}): files whose assertions time an answer but that keep
 *   little of a core busy, two at a time.
 * - The serial group ({@link SERIAL_FILES}): the files whose assertions hold a wall-clock budget while
 *   they load the machine (drain, soak, WORKERS, Chromium), one file at a time and alone.
 *
 * Every test and hook has {@link TEST_TIMEOUT_MS} unless it sets its own `timeout` (on Node 20 through
 * `test-suites/node20-test-timeout.cjs`), and a file's process that has not exited {@link EXIT_GRACE_MS} after
 * its tests were done, or still runs {@link FILE_TIMEOUT_MS} after it started, is killed, failing the file
 * ({@link HangWatch}). The exit code comes from node:test's events ({@link RunOutcome}): 1 when a test, suite, hook or file
 * failed or was cancelled, or a file reported no test. Before the summary, `ℹ stores: …` says how many
 * tests ran on each store and why a store's cases did not run.
 *
 * The servers and CLIs the tests start run the build: `dist/` is rebuilt first when `src/` is newer.
 * `--quick` leaves out {@link SLOW_FILES} (what `npm run test:suites:quick` runs while you work), `--again`
 * {@link NODE_INDEPENDENT_FILES} (a second run on another Node); file
 * paths as arguments narrow the run to them, still in their groups. `TEST_CONCURRENCY` overrides the
 * concurrent group's width; `TEST_TIMEOUT_MS` and `TEST_EXIT_GRACE_MS` the limits, and `TEST_SUITES_DIR`
 * the directory of test files (`test`), for a run on fixtures (test/tools/hang-ends-run.test.ts). Run with
 * `node --import tsx`: node:test starts each file's process with this process's flags.
 */
import { execFileSync } from 'node:child_process'
import { setMaxListeners } from 'node:events'
import { constants, writeFileSync } from 'node:fs'
import { access, chmod, mkdir, readdir } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { run } from 'node:test'
import { spec as SpecReporter, type TestEvent } from 'node:test/reporters'
import { fileURLToPath } from 'node:url'
import { staleBuildFiles } from '../tools/harness/build-freshness.js'
import { createRunDatabase } from '../tools/harness/run-database.js'
import { testDatabaseUrlIn } from '../tools/harness/test-stores.js'
import { HangWatch, killTestFileProcess } from './test-suites/hang-watch.js'
import { RunOutcome } from './test-suites/run-outcome.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Files whose assertions hold a wall-clock budget and that load the machine while they do (a server
 * under load, several processes, a browser): one at a time and alone, last.
 */
export const SERIAL_FILES: readonly RegExp[] = [
  // the SIGTERM drain and its bound, the soak
  /^test\/reliability\/(background-shutdown|drain-bound|graceful-shutdown|soak)\.test\.ts$/,
  // WORKERS=N: a primary and its workers, restarts timed
  /^test\/bin\/cluster\.test\.ts$/,
  // load shedding: a server driven past its event-loop bound by real load
  /^test\/overload\//,
  // the /docs page drives Chromium with 10 s timeouts per step; so does the client's page (15 s per step)
  /^test\/docs\/docs-page\.test\.ts$/,
  /^test\/client\/browser\.test\.ts$/
]

/**
 * Files whose assertions hold a wall-clock budget of a second or more (they mostly wait on timers,
 * sockets and PostgreSQL: each keeps less than half a core busy on average, and they passed in the
 * serial group with the machine's load average at 10): two at a time, away from the concurrent group.
 */
export const PAIRED_FILES: readonly RegExp[] = [
  // a page cache's staleness bound (+200 ms), the outage's recovery bound, Redis stalls (< 1 s),
  // a revoked key's delay across instances
  /^test\/pets\/pets-list-cache\.test\.ts$/,
  /^test\/infra\/database\/postgres-outage\.test\.ts$/,
  /^test\/rate-limits\/redis-rate-limits\.test\.ts$/,
  /^test\/bin\/multi-instance\.test\.ts$/,
  // the first npx petstore on a fresh clone must answer within 5 s
  /^test\/bin\/npx-first-call\.test\.ts$/,
  // the client's retries and throttling answer within a second or two
  /^test\/client\/(create-retries|throttling-and-outages)\.test\.ts$/,
  // webhook deliveries must arrive within 5 to 30 s, retries and backoff included (the webhooks suites), and the
  // bounds of delivery hold answers of 500-600 ms against time limits of 1 to 2 s;
  // the client's feed follower must stop within a second of its abort
  /^test\/webhooks\/(delivery(-instances|-answers|-address-guard|-bounds)?|endpoint-lifecycle)\.test\.ts$/,
  // a rate per endpoint: gaps of 200 ms measured at a receiver, within 40 ms
  /^test\/webhooks\/endpoint-rate-limit\.test\.ts$/,
  /^test\/client\/events\.test\.ts$/,
  // SIGKILL during a stream of writes, then a restart: what they assert is what survived, and the stream
  // needs its few hundred acknowledged creates within 2.5 s, or its 150 changes or 60 orders within 30 s
  // (one core does thousands a second)
  /^test\/reliability\/crash-(durability|events|idempotency|orders|webhooks|webhook-recover)\.test\.ts$/,
  // the buses under SIGKILL (the same streams of creates) and a dead instance's bus taken over once its 4 s lease ends;
  // the backlog of a broker away must arrive within 60 s; a failing holder hands the bus over within seconds, a batch
  // ends before its lease (one file at a time in-process: apps built beside it would hold its event loop); two
  // deployments on one stream within 15 s
  /^test\/buses\/(bus-crash|broker-outage|bus-retention|bus-lease|shared-broker)\.test\.ts$/,
  // the streaming feed: a reader must get 800 large events within 60 s while another stalls, a SIGKILL mid-burst,
  // two instances, SIGTERM after streams were abandoned; the client's follower over the stream, through a cut connection
  /^test\/events\/event-stream(-instances|-shutdown|-backlog)?\.test\.ts$/,
  /^test\/client\/events-stream\.test\.ts$/
]

/**
 * Files whose outcome no Node.js version can change: what they test is npm's, not Node's. A second run of the
 * suites on another Node (`--again`, as scripts/test-on-node.sh runs them) leaves them out unless named.
 */
export const NODE_INDEPENDENT_FILES: readonly string[] = [
  // npm (the same npm on every run) writes the lockfile from the manifests; 40 CPU-s of extracting packages
  'test/release/npm-install-lockfile.test.ts',
  // npx installs the project into its cache and runs its prepare
  'test/bin/npx-first-call.test.ts'
]

/** Files of the paired group run at once. */
const PAIRED_CONCURRENCY = 2

/** The serial files `--quick` leaves out: SIGKILL, drain, soak and WORKERS, minutes together. */
export const SLOW_FILES: readonly RegExp[] = [/^test\/reliability\//, /^test\/bin\/cluster\.test\.ts$/]

/**
 * The concurrent group's longest files (a minute or more on a busy 2-core machine), started first, in
 * this order, so that the group does not end with one of them running alone: the release and the
 * production install (npm ci and the build), the files that start CLIs and servers, and the route
 * and store suites that wait most on PostgreSQL. The others follow in path order.
 */
export const LONG_FILES: readonly RegExp[] = [
  /^test\/release\/release\.test\.ts$/,
  /^test\/release\/docker-dependency-layer\.test\.ts$/,
  /^test\/release\/production-install\.test\.ts$/,
  /^test\/release\/npm-install-lockfile\.test\.ts$/,
  /^test\/bin\/server\.test\.ts$/,
  /^test\/bin\/cli\.test\.ts$/,
  /^test\/webhooks\/webhooks-cli\.test\.ts$/,
  /^test\/infra\/database\/postgres-store\.test\.ts$/,
  /^test\/(pets\/pets-(create|update|list)|idempotency\/pets-idempotency)\.test\.ts$/
]

/** How many of the slowest files the run names before its summary. */
const SLOWEST_SHOWN = 8

/** Files of the concurrent group run at once: the machine's 2 cores are mostly idle while tests wait on processes, sockets and fsync. */
const CONCURRENCY = 4

/**
 * Every test's and hook's time limit unless it sets its own `timeout`: a test that hangs fails after it
 * instead of stalling CI. The longest tests without a `timeout` of their own take about 30 s on a busy
 * 2-core machine (the trace sampler, OTLP traces, the metrics listener; the soak's runs set 60 s); on a
 * slow day CPU-bound work takes three to four times as long, so 5 min leaves them more than twice that.
 * What takes longer sets its own: the release's build hook and the production install (15 min each).
 * Node 24's run() gives it to each file's process as `--test-timeout`, so it bounds each test and hook;
 * Node 20's gets the flag and `test-suites/node20-test-timeout.cjs`, which applies it the same way.
 */
export const TEST_TIMEOUT_MS = 5 * 60_000

/**
 * How long a file's process may live on once its top-level tests are all done (passed, failed or timed
 * out) before the runner kills it and fails the file: a test that timed out may leave a server, a timer or
 * a socket open, and a file's process with one open never exits by itself (Node 24 is not told to force
 * its exit, which lost events there). Its top-level `after` hooks run within the grace (a server's drain
 * takes up to 15 s).
 */
export const EXIT_GRACE_MS = 60_000

/**
 * The bound on a whole file's process, beyond the longest file, the release (its 15 min build hook, then
 * one server test per store): a test that spins (its timeout never gets to run) or a hang outside any
 * test. Node 20's run() applies its `timeout` to each file's process as a whole; on both Nodes the runner
 * kills a file's process still running this long after it started.
 */
export const FILE_TIMEOUT_MS = 30 * 60_000

/** Whether run()'s `timeout` bounds each test (Node 24) or each file's process (Node 20), as measured on 20.20 and 24.21. */
const TIMEOUT_PER_TEST = Number(process.versions.node.split('.')[0]) >= 24

// the lines node:test closes a run with, in its order; summed over the groups and printed (CI reads them)
const SUMMARY = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms'] as const
type SummaryName = typeof SUMMARY[number]
const SUMMARY_LINE = new RegExp(`^(${SUMMARY.join('|')}) (\\d+(?:\\.\\d+)?)$`)

interface Group {
  name: string
  files: string[]
  concurrency: number
}

async function listTestFiles (dir: string): Promise<string[]> {
  const entries = await readdir(resolve(ROOT, dir), { withFileTypes: true, recursive: true })
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort()
}

/** The three groups, every test file in exactly one, in the order they run. */
export async function testGroups (options: { quick: boolean, again: boolean, concurrency: number, only: string[] }): Promise<Group[]> {
  const matches = (file: string, patterns: readonly RegExp[]): boolean => patterns.some((pattern) => pattern.test(file))
  const only = options.only.map((file) => relative(ROOT, join(ROOT, file)).split('\\').join('/'))
  const all = await listTestFiles(process.env.TEST_SUITES_DIR ?? 'test')
  const unknown = only.filter((file) => !all.includes(file))
  if (unknown.length > 0) throw new Error(`no such test file: ${unknown.join(', ')}`)
  const files = all
    .filter((file) => only.length === 0 || only.includes(file))
    .filter((file) => !(options.quick && matches(file, SLOW_FILES)))
    .filter((file) => !(options.again && only.length === 0 && NODE_INDEPENDENT_FILES.includes(file)))
  const serial = files.filter((file) => matches(file, SERIAL_FILES))
  const paired = files.filter((file) => !serial.includes(file) && matches(file, PAIRED_FILES))
  const rank = (file: string): number => {
    const index = LONG_FILES.findIndex((pattern) => pattern.test(file))
    return index === -1 ? LONG_FILES.length : index
  }
  const concurrent = files.filter((file) => !serial.includes(file) && !paired.includes(file))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
  return [
    { name: 'concurrent', files: concurrent, concurrency: options.concurrency },
    { name: 'paired', files: paired, concurrency: PAIRED_CONCURRENCY },
    { name: 'serial', files: serial, concurrency: 1 }
  ].filter((group) => group.files.length > 0)
}

/** A summary line of one group's run (nesting 0, no file), as a name and a number; undefined for any other event. */
function summaryLine (event: TestEvent): [SummaryName, number] | undefined {
  if (event.type !== 'test:diagnostic') return undefined
  const data = event.data as unknown as { nesting?: number, file?: string, message?: string }
  if (data.nesting !== 0 || data.file !== undefined) return undefined
  const match = SUMMARY_LINE.exec(data.message ?? '')
  return match === null ? undefined : [match[1] as SummaryName, Number(match[2])]
}

/** The servers and CLIs the tests start run the build (`dist/`): bring it up to date when `src/` is newer. */
function buildIfStale (say: (message: string) => void): void {
  const stale = staleBuildFiles(ROOT)
  if (stale.length === 0) return
  say(`dist/ is older than src/ (${stale.length} files, e.g. ${stale[0] ?? ''}): npm run build first`)
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
}

const seconds = (ms: number): string => (ms / 1000).toFixed(0)

/**
 * Where the suites keep their scratch files unless TMPDIR names a place: a directory in memory (Linux's
 * /dev/shm), the same one every run, so that tsx's cache of compiled files (in the temporary directory) lasts.
 */
async function scratchDirectory (): Promise<string | undefined> {
  if (process.env.TMPDIR !== undefined && process.env.TMPDIR !== '') return undefined
  if (!await access('/dev/shm', constants.W_OK | constants.X_OK).then(() => true, () => false)) return undefined
  const dir = `/dev/shm/petstore-tests-${process.getuid?.() ?? 'user'}`
  await mkdir(dir, { recursive: true })
  // the release runs as another user from a directory in here (test/release/release.test.ts)
  await chmod(dir, 0o755)
  return dir
}

/** A positive integer from the environment variable `name`, or `fallback` when it is not set. */
function positiveIntegerFromEnv (name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!(Number.isInteger(value) && value >= 1)) throw new Error(`${name} must be a positive integer, got "${process.env[name] ?? ''}"`)
  return value
}

async function main (): Promise<number> {
  const quick = process.argv.includes('--quick')
  const again = process.argv.includes('--again')
  const only = process.argv.slice(2).filter((argument) => argument !== '--quick' && argument !== '--again')
  const concurrency = positiveIntegerFromEnv('TEST_CONCURRENCY', CONCURRENCY)
  const testTimeoutMs = positiveIntegerFromEnv('TEST_TIMEOUT_MS', TEST_TIMEOUT_MS)
  const exitGraceMs = positiveIntegerFromEnv('TEST_EXIT_GRACE_MS', EXIT_GRACE_MS)
  const started = performance.now()
  const reporter = new SpecReporter()
  reporter.pipe(process.stdout)
  const totals = new Map<SummaryName, number>(SUMMARY.map((name) => [name, 0]))
  const outcome = new RunOutcome()
  const watch = new HangWatch({ exitGraceMs, fileTimeoutMs: FILE_TIMEOUT_MS })
  const say = (message: string): void => { reporter.write({ type: 'test:diagnostic', data: { nesting: 0, message } }) }

  buildIfStale(say)
  // Node 22 and later keep V8's compiled code of each module here and reuse it in every later process (test
  // files, the servers and CLIs they start; a child's own NODE_COMPILE_CACHE wins): 12 % less CPU in the
  // CLI-heavy files on Node 24. Node 20 ignores the variable.
  process.env.NODE_COMPILE_CACHE ??= join(ROOT, 'node_modules', '.cache', 'node-compile-cache')
  // Node 20's run() starts each file's process with this process's flags: these give each test its limit there
  if (!TIMEOUT_PER_TEST) {
    process.execArgv.push('--expose-internals', `--require=${join(ROOT, 'scripts', 'test-suites', 'node20-test-timeout.cjs')}`, `--test-timeout=${testTimeoutMs}`)
  }
  // the test files' and their processes' scratch files (SQLite files, installs, releases) in memory: a quarter
  // less CPU in the installs (no disk journal for 800 packages' files), 10 % less in the route suites. They
  // stay real files on a real file system; the durability tests SIGKILL processes, which never needed fsync
  const scratch = await scratchDirectory()
  if (scratch !== undefined) process.env.TMPDIR = scratch
  // the PostgreSQL suites' schemas in a database of this run's own, dropped when it ends (tools/harness/run-database.ts)
  const serverUrl = testDatabaseUrlIn(process.env)
  const runDatabase = serverUrl === undefined ? undefined : await createRunDatabase(serverUrl)
  if (runDatabase !== undefined) process.env.TEST_DATABASE_URL = runDatabase.url
  if (runDatabase?.refused !== undefined) say(`the PostgreSQL suites use TEST_DATABASE_URL's own database: a database of the run's own could not be created (${runDatabase.refused})`)
  const groupTimes: string[] = []
  const groups = await testGroups({ quick, again, concurrency, only })
  if (groups.length === 0) throw new Error('no test file to run')
  if (again && only.length === 0) say(`left out of this second run (what they test does not depend on Node): ${NODE_INDEPENDENT_FILES.join(', ')}`)
  try {
    for (const group of groups) {
      say(`${group.name} group: ${group.files.length} files, ${group.concurrency} at a time`)
      const groupStarted = performance.now()
      const stop = new AbortController()
      // run() adds a listener to the signal per file: without this, Node warns of a leak past 10 files
      setMaxListeners(group.files.length + 10, stop.signal)
      const watchdog = setInterval(() => {
        const now = performance.now()
        for (const { file, reason } of watch.due(now)) {
          const killed = killTestFileProcess(file)
          say(`${relative(ROOT, file)}: ${reason}: ${killed === 0 ? 'its process was not found to kill' : `killed its process${killed > 1 ? ` and the ${killed - 1} it started` : ''}`}, the file fails`)
        }
        const outlived = watch.outlivedKill(now)
        if (outlived.length === 0 || stop.signal.aborted) return
        say(`${outlived.map((file) => relative(ROOT, file)).join(', ')}: still running after being killed, the ${group.name} group is stopped`)
        stop.abort()
      }, Math.min(1_000, exitGraceMs))
      const events = run({
        files: group.files.map((file) => resolve(ROOT, file)),
        concurrency: group.concurrency,
        timeout: TIMEOUT_PER_TEST ? testTimeoutMs : FILE_TIMEOUT_MS,
        // Node 20: a test that timed out may leave a socket or timer behind, and its file's process exits anyway.
        // Not on Node 24: there a forced exit lost part of the file's events on their way here (the same four
        // files reported 47 to 82 of their 82 tests); a file left running is killed by the watchdog above
        forceExit: !TIMEOUT_PER_TEST,
        signal: stop.signal
      }) as AsyncIterable<TestEvent>
      try {
        for await (const event of events) {
          watch.add(event, performance.now())
          outcome.add(event)
          const line = summaryLine(event)
          if (line === undefined) reporter.write(event)
          else totals.set(line[0], (totals.get(line[0]) ?? 0) + line[1])
        }
      } finally {
        clearInterval(watchdog)
      }
      groupTimes.push(`${group.name} ${seconds(performance.now() - groupStarted)} s`)
    }
  } finally {
    // also when a group threw: the run's database is not left on the server
    await runDatabase?.drop()
  }

  const took = watch.spans(performance.now())
  say(`slowest files: ${took.sort(([, a], [, b]) => b - a).slice(0, SLOWEST_SHOWN)
    .map(([file, ms]) => `${relative(ROOT, file)} ${seconds(ms)} s`).join(', ')}`)
  say(`groups: ${groupTimes.join(', ')}`)
  // every file's span, for whoever balances the groups (TEST_FILE_TIMES=path)
  if (process.env.TEST_FILE_TIMES !== undefined) {
    writeFileSync(process.env.TEST_FILE_TIMES, JSON.stringify(Object.fromEntries(took.map(([file, ms]) => [relative(ROOT, file), Math.round(ms)])), null, 1))
  }
  say(outcome.describeStores(process.env))
  if (outcome.filesWithoutTests.length > 0) say(`files that ran no test: ${outcome.filesWithoutTests.map((file) => relative(ROOT, file)).join(', ')}`)
  if (outcome.summaryFailed && outcome.failures.length === 0) say('node:test reported the run as failed')
  totals.set('duration_ms', Math.round((performance.now() - started) * 1e6) / 1e6)
  for (const [name, value] of totals) say(`${name} ${value}`)
  await new Promise<void>((resolve) => { reporter.end(resolve) })
  return outcome.ok ? 0 : 1
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  process.stderr.write(`test:suites: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
