/**
 * Benchmark: `npm run bench` (full) or `npm run bench -- --quick` (the short version CI runs); `-- --only webhooks|streams|buses|orders|overload`
 * runs those scenarios alone (a partial report, written beside the full one as latest-<name>.md); with `--scenario <words>`, only the
 * webhook, stream or bus scenarios whose name holds those words (written as latest-<name>-<words>.md).
 * What it measures and how: docs/performance.md. It never fails on a number; it exits non-zero
 * only when the harness itself could not run (or could not measure a scenario).
 */
import { randomBytes } from 'node:crypto'
import { cpus, platform, release, totalmem } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { LOAD_GENERATOR_CPU, PINNING, pinThisProcess } from '../tools/harness/cpu-pinning.js'
import { chooseLoadGenerator } from '../tools/harness/load-generator.js'
import { rssBytes } from '../tools/harness/rss-sampler.js'
import type { StoreKind } from '../tools/harness/scratch-store.js'
import type { BenchContext } from './_util/bench-context.js'
import { buildService } from './_util/build.js'
import { compareServers } from './_util/compare-servers.js'
import { LOAD_SCENARIOS } from './_util/load-scenarios.js'
import { CONNECTIONS, log, orderablePetsPerServer, planFor, SEED_PETS, type Plan } from './_util/plan.js'
import { killAll, migrateStore, startBare, startContractPeer, startPeer, startService, stopServer } from './_util/servers.js'
import { postgresProblem, postgresServerUrl, seededStore, storeFacts, type BenchStore } from './_util/stores.js'
import { freePort } from '../tools/harness/free-port.js'
import { stealNotes } from './_util/steal-note.js'
import { evaluateChecks, evaluateTargets, evaluateTimings, standardNotes, unsaturatedBareNotes, type Check, type Report } from './report.js'
import { writeReport } from './report-markdown.js'
import { coldStart, coldStartsBeside } from './scenarios/cold-start.js'
import { crossInstanceList } from './scenarios/cross-instance-list.js'
import { EVENT_STREAM_SCENARIOS } from './scenarios/event-streams.js'
import { inProcessTimings } from './scenarios/in-process-timings.js'
import { overload } from './scenarios/overload.js'
import { storeSize } from './scenarios/store-size.js'
import { tracing } from './scenarios/tracing.js'
import { WEBHOOK_SCENARIOS } from './scenarios/webhooks.js'
import { BUS_SCENARIOS } from './scenarios/buses.js'
import { workers } from './scenarios/workers.js'

/** Stores still to drop when the run ends, however it ends. */
const stores = new Set<BenchStore>()

function banner (lines: string[]): string {
  const width = Math.max(...lines.map((line) => line.length)) + 6
  const rule = '#'.repeat(width)
  return [rule, ...lines.map((line) => `## ${line.padEnd(width - 6)} ##`), rule].join('\n')
}

function emptyReport (plan: Plan, context: BenchContext): Report {
  return {
    quick: plan.quick,
    date: new Date().toISOString(),
    machine: { cpuModel: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, os: `${platform()} ${release()}`, totalMemoryMb: Math.round(totalmem() / 1024 / 1024) },
    settings: {
      connections: CONNECTIONS,
      rounds: plan.rounds,
      warmupSeconds: plan.warmupSeconds,
      durationSeconds: plan.durationSeconds,
      pinned: PINNING.available,
      pinning: PINNING.available ? PINNING.reason : `NOT pinned: ${PINNING.reason}`,
      loadGenerator: context.generator.name === 'wrk' ? 'wrk -t1 -c50 --latency' : 'autocannon -c50 (in-process)',
      loadGeneratorFallback: context.generator.fallbackReason,
      seedPets: SEED_PETS,
      bigStorePets: plan.bigStorePets
    },
    rows: [],
    pairs: [],
    coldStartMs: [],
    coldStartCpuMs: [],
    idleRssMb: [],
    contractColdStartMs: [],
    contractColdStartCpuMs: [],
    contractIdleRssMb: [],
    idleRssAfterReadyMb: {},
    targets: [],
    checks: [],
    timingSamples: [],
    timings: [],
    notes: standardNotes(plan),
    harnessErrors: []
  }
}

/** Runs `work`; a failure is recorded as something the harness could not measure, and the run goes on. */
async function attempt (report: Report, label: string, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    log(`${label} FAILED: ${message}`)
    report.harnessErrors.push(`${label}: ${message}`)
  }
}

/**
 * What `--only` may name: the scenarios run alone, to A/B one lever quickly (the full report needs every one):
 * the webhook scenarios, the event stream's, the message buses', the orders' loads (placeOrder, getInventory), or the overload scenario.
 */
const ONLY = ['webhooks', 'streams', 'buses', 'orders', 'overload'] as const
// with createPet, the durable write placeOrder's target is modelled on, measured in the same run
const ORDER_SCENARIOS = ['createPet', 'placeOrder', 'getInventory']
type Only = typeof ONLY[number]

// the webhook scenarios (bench/scenarios/webhooks.ts) each give one check
const WEBHOOK_CHECKS = WEBHOOK_SCENARIOS.map(({ name, measure }) => ({ name, measure: async (context: BenchContext, kind: StoreKind) => [await measure(context, kind)] }))

/** Scenarios that give checks (the webhooks', the event stream's, bench/scenarios/event-streams.ts; the buses', bench/scenarios/buses.ts), on each store: their checks join the targets. */
async function checkScenarios (label: string, scenarios: ReadonlyArray<{ name: string, measure: (context: BenchContext, kind: StoreKind) => Promise<Check[]> }>, context: BenchContext, report: Report, kinds: readonly StoreKind[], only?: string): Promise<Check[]> {
  const checks: Check[] = []
  const chosen = scenarios.filter(({ name }) => only === undefined || name.includes(only))
  if (chosen.length === 0) throw new Error(`--scenario ${String(only)}: known: ${scenarios.map(({ name }) => name).join(', ')}`)
  for (const kind of kinds) {
    for (const { name, measure } of chosen) await attempt(report, `${kind}: ${label}, ${name}`, async () => { checks.push(...await measure(context, kind)) })
  }
  return checks
}

async function bench (plan: Plan, only: Only | undefined, scenario: string | undefined): Promise<Report> {
  const generator = chooseLoadGenerator(log)
  const apiKey = `bench_${randomBytes(32).toString('base64url')}`
  const context: BenchContext = { plan, generator, apiKey, headers: { authorization: `Bearer ${apiKey}` }, pgServerUrl: postgresServerUrl() }
  const report = emptyReport(plan, context)
  if (generator.fallbackReason !== undefined) {
    const text = banner([
      `WARNING: ${generator.fallbackReason}.`,
      'FALLING BACK TO AUTOCANNON, in this process: its single-process ceiling',
      'compresses every ratio. These figures do not compare with wrk runs.'
    ])
    process.stderr.write(`\n${text}\n\n`)
    process.stdout.write(`\n${text}\n\n`)
    report.notes.unshift(`LOAD GENERATOR FALLBACK: autocannon instead of wrk (${generator.fallbackReason}); its ceiling compresses every ratio.`)
  }

  const pgProblem = await postgresProblem(context.pgServerUrl)
  if (pgProblem !== undefined) report.notes.push(`PostgreSQL SKIPPED: ${context.pgServerUrl.replace(/\/\/[^@/]*@/, '//…@')} is unreachable (${pgProblem}). Set TEST_DATABASE_URL to run it.`)
  const kinds: StoreKind[] = pgProblem === undefined ? ['sqlite', 'postgres'] : ['sqlite']
  const migrate = (url: string): Promise<void> => migrateStore(url, apiKey)
  if (only === 'webhooks') {
    report.targets = await checkScenarios('webhooks', WEBHOOK_CHECKS, context, report, kinds, scenario)
    return report
  }
  if (only === 'streams') {
    report.targets = await checkScenarios('streams', EVENT_STREAM_SCENARIOS, context, report, kinds, scenario)
    return report
  }
  if (only === 'buses') {
    report.targets = await checkScenarios('buses', BUS_SCENARIOS, context, report, kinds, scenario)
    return report
  }

  let sqliteStore: BenchStore | undefined
  const bare = await startBare()
  try {
    for (const kind of kinds) {
      await attempt(report, kind, async () => {
        log(`${kind}: preparing a store of ${SEED_PETS.toLocaleString('en-US')} pets`)
        const store = await seededStore(kind, SEED_PETS, context.pgServerUrl, migrate, { servers: ['peer', 'service'], petsEach: orderablePetsPerServer(plan) })
        stores.add(store)
        if (kind === 'sqlite') sqliteStore = store
        const facts = await storeFacts(store)
        const peer = await startPeer(store.url, apiKey)
        const contract = await startContractPeer(store.url, apiKey).catch(async (error: unknown) => { await stopServer(peer); throw error })
        try {
          const service = await startService(store.url, apiKey)
          try {
            await sleep(1_000)
            const idle = rssBytes(service.processTree())
            if (idle !== undefined) report.idleRssAfterReadyMb[kind] = idle / 1024 / 1024
            const loads = only === 'orders' ? LOAD_SCENARIOS.filter((scenario) => ORDER_SCENARIOS.includes(scenario.name)) : LOAD_SCENARIOS
            if (only !== 'overload') report.rows.push(...await compareServers(context, kind, facts, { bare, peer, contract, service }, loads, report.harnessErrors))
            if (only !== undefined) return
            await attempt(report, `${kind}: a change through another instance`, async () => {
              report.timingSamples.push({ target: 'crossInstanceList', store: kind, samplesMs: await crossInstanceList(context, store, service) })
            })
          } finally {
            await stopServer(service)
          }
        } finally {
          await stopServer(contract)
          await stopServer(peer)
        }
      })
    }
  } finally {
    await stopServer(bare)
  }

  const store = sqliteStore
  if (only === 'overload' && store !== undefined) {
    await attempt(report, 'overload', async () => { report.notes.push(...await overload(context, store)) })
    return report
  }
  if (only === 'orders') {
    report.targets = evaluateTargets(report)
    return report
  }
  if (store !== undefined) {
    await attempt(report, 'cold start', async () => {
      const { service, contract } = await coldStartsBeside(context, store)
      report.coldStartMs = service.coldStartMs
      report.coldStartCpuMs = service.coldStartCpuMs
      report.idleRssMb = service.idleRssMb
      report.contractColdStartMs = contract.coldStartMs
      report.contractColdStartCpuMs = contract.coldStartCpuMs
      report.contractIdleRssMb = contract.idleRssMb
    })
    await attempt(report, 'cold start, Redis refused', async () => {
      // nothing listens on a port just found free: every connection to it is refused at once
      const refused = `redis://127.0.0.1:${await freePort()}`
      const result = await coldStart(context, store, { env: { REDIS_URL: refused } })
      report.timingSamples.push({ target: 'redisRefusedStart', store: 'sqlite', samplesMs: result.coldStartMs })
    })
    await attempt(report, 'WORKERS=2', async () => {
      const { row, note } = await workers(context, store)
      report.pairs.push(row)
      report.notes.push(note)
    })
    // 2,000 connections for 15 s, twice: the full run only
    if (!plan.quick) await attempt(report, 'overload', async () => { report.notes.push(...await overload(context, store)) })
    await attempt(report, 'tracing', async () => {
      const { rows, note } = await tracing(context, store)
      report.pairs.push(...rows)
      report.notes.push(note)
    })
  }
  await attempt(report, 'store size', async () => { report.pairs.push(await storeSize(context)) })
  await attempt(report, 'in-process timings', async () => { report.timingSamples.push(...await inProcessTimings(plan)) })
  const webhookChecks = await checkScenarios('webhooks', WEBHOOK_CHECKS, context, report, kinds)
  const streamChecks = await checkScenarios('streams', EVENT_STREAM_SCENARIOS, context, report, kinds)
  const busChecks = await checkScenarios('buses', BUS_SCENARIOS, context, report, kinds)

  report.targets = [...evaluateTargets(report), ...webhookChecks, ...streamChecks, ...busChecks]
  report.checks = evaluateChecks(report)
  report.timings = evaluateTimings(report)
  report.notes.push(...unsaturatedBareNotes(report))
  report.notes.push(...stealNotes(report.rows.map((row) => row.rounds)))
  const failing = report.rows.filter((row) => Object.values(row.figures).some((f) => f.non2xx > 0 || f.errors > 0))
  for (const row of failing) report.notes.push(`${row.scenario} (${row.store}) had non-2xx answers or connection errors (see the per-server table): its figures count them.`)
  return report
}

async function cleanUp (): Promise<void> {
  await killAll()
  for (const store of [...stores]) {
    stores.delete(store)
    await store.drop().catch((error: unknown) => { log(`could not drop a store: ${String(error)}`) })
  }
}

async function main (): Promise<number> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, scenario: { type: 'string' } } })
  const plan = planFor(values.quick === true)
  const only = values.only as Only | undefined
  if (only !== undefined && !ONLY.includes(only)) throw new Error(`--only ${String(only)}: known: ${ONLY.join(', ')}`)
  const scenario = values.scenario
  if (scenario !== undefined && only !== 'webhooks' && only !== 'streams' && only !== 'buses') throw new Error('--scenario narrows --only webhooks, streams or buses')
  const started = performance.now()
  let interrupted = false
  const onSignal = (): void => {
    if (interrupted) return
    interrupted = true
    log('interrupted: cleaning up')
    cleanUp().finally(() => { process.exit(130) }).catch(() => {})
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  // the runner and the load generator it starts share the load generator's CPU; the servers get the other
  const pinned = pinThisProcess(LOAD_GENERATOR_CPU)
  log(`${plan.quick ? 'quick' : 'full'} run; ${pinned ? PINNING.reason : `NOT pinned: ${PINNING.reason}`}`)
  try {
    await buildService()
    const report = await bench(plan, only, scenario)
    report.elapsedSeconds = Math.round((performance.now() - started) / 1000)
    const part = only === undefined || scenario === undefined ? only : `${only}-${scenario.replace(/[^a-z0-9]+/gi, '-')}`
    const md = await writeReport(report, part)
    process.stdout.write(`\n${md}\n`)
    const name = part === undefined ? 'latest' : `latest-${part}`
    log(`done in ${report.elapsedSeconds} s; wrote bench/results/${name}.json and ${name}.md`)
    if (report.harnessErrors.length === 0) return 0
    log(`the harness could not measure everything:\n  ${report.harnessErrors.join('\n  ')}`)
    return 1
  } finally {
    await cleanUp()
  }
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  cleanUp().finally(() => { process.exit(1) }).catch(() => {})
})
