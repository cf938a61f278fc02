/**
 * A/B of two builds of the service: `npm run bench:ab -- --base <git revision>` measures the working
 * tree's build against the build of `<revision>`, alternated on one seeded store, with the bench's
 * instrument (wrk pinned, CPU time per request from schedstat, medians). It is how a performance lever
 * is judged before it is kept (docs/performance.md). Options: `--scenarios getPet,listPets` (any load scenario, `updateOrder`
 * and `updateOrderUnchanged`: 1,000 orders placed on each build first, then patched, and `coldStart`:
 * the two builds started in turn, `--rounds` times each, spawn to the first 200 of listPets, its CPU time and
 * the RSS 1 s later), `--store sqlite|postgres`, `--rounds 4`, `--seconds 5`, `--env K=V,K=V` (both builds'
 * environment, e.g. a sampler), `--otlp` (both export traces to a local receiver) and `--peers` (the bare baseline, the plain
 * peer and the contract-equal peer in the same rounds, on the working tree's store, and the contract-equal peer's cold
 * starts beside the two builds': one run gives both builds against the peers).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { LOAD_GENERATOR_CPU, pinThisProcess } from '../tools/harness/cpu-pinning.js'
import { chooseLoadGenerator } from '../tools/harness/load-generator.js'
import { PROJECT_ROOT } from '../tools/harness/project-root.js'
import type { StoreKind } from '../tools/harness/scratch-store.js'
import type { BenchContext } from './_util/bench-context.js'
import { buildService } from './_util/build.js'
import { LOAD_SCENARIOS } from './_util/load-scenarios.js'
import type { LoadScenario } from './_util/load-scenario.js'
import { alternate, median, pairedRatio, type Measurement } from './_util/measure.js'
import { log, orderablePetsPerServer, planFor, SEED_PETS } from './_util/plan.js'
import { killAll, startBare, startContractPeer, startPeer, startService, stopServer } from './_util/servers.js'
import { postgresServerUrl, seededStore, storeFacts, type BenchStore, type IdRange, type StoreFacts } from './_util/stores.js'
import type { ServerProcess } from '../tools/harness/server-process.js'
import { coldStart } from './scenarios/cold-start.js'
import { placeOrder } from './scenarios/place-order.js'
import { placeOrdersToUpdate, updateOrder, updateOrderUnchanged } from './scenarios/update-order.js'
import { OtlpReceiver } from '../tools/harness/otlp-receiver.js'

/** `revision` checked out and built in a temporary worktree, its node_modules the repository's. */
async function buildRevision (revision: string): Promise<{ dir: string, remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'petstore-ab-'))
  execFileSync('git', ['worktree', 'add', '--detach', dir, revision], { cwd: PROJECT_ROOT, stdio: 'ignore' })
  const remove = async (): Promise<void> => {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: PROJECT_ROOT, stdio: 'ignore' })
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
    await buildService(dir)
  } catch (error) {
    await remove()
    throw error
  }
  return { dir, remove }
}

function figures (runs: readonly Measurement[] | undefined): string {
  const cpu = median((runs ?? []).map((m) => m.cpuUsPerRequest))
  const rps = median((runs ?? []).map((m) => m.reqPerSec))
  return `${rps === undefined ? '–' : Math.round(rps)} req/s, ${cpu === undefined ? '–' : cpu.toFixed(1)} µs CPU/request`
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: 'HEAD' },
      scenarios: { type: 'string', default: 'getPet,listPets' },
      store: { type: 'string', default: 'sqlite' },
      rounds: { type: 'string', default: '4' },
      seconds: { type: 'string', default: '5' },
      env: { type: 'string', default: '' },
      otlp: { type: 'boolean', default: false },
      peers: { type: 'boolean', default: false }
    }
  })
  const store = values.store as StoreKind
  const wanted = values.scenarios.split(',')
  const scenarios = AB_SCENARIOS.filter((scenario) => wanted.includes(scenario.name))
  const coldStarts = wanted.includes(COLD_START)
  if (scenarios.length === 0 && !coldStarts) throw new Error(`--scenarios: none of ${values.scenarios}; known: ${[...AB_SCENARIOS.map((s) => s.name), COLD_START].join(', ')}`)
  const env = Object.fromEntries(values.env.split(',').filter((pair) => pair !== '').map((pair) => {
    const equals = pair.indexOf('=')
    if (equals < 1) throw new Error(`--env: ${pair} is not K=V`)
    return [pair.slice(0, equals), pair.slice(equals + 1)]
  }))
  pinThisProcess(LOAD_GENERATOR_CPU)
  const plan = { ...planFor(false), rounds: Number(values.rounds), durationSeconds: Number(values.seconds), warmupSeconds: 2 }
  const apiKey = `bench_${randomBytes(32).toString('base64url')}`
  const context: BenchContext = { plan, generator: chooseLoadGenerator(log), apiKey, headers: { authorization: `Bearer ${apiKey}` }, pgServerUrl: postgresServerUrl() }

  await buildService()
  const base = await buildRevision(values.base)
  const receiver = values.otlp ? await OtlpReceiver.start({ keep: false }) : undefined
  if (receiver !== undefined) Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
  try {
    await compare(context, store, { scenarios, coldStarts, env, peers: values.peers }, values.base, base.dir)
    if (receiver !== undefined) process.stdout.write(`the local OTLP receiver got ${receiver.exports} exports\n`)
  } finally {
    await receiver?.close()
    await base.remove()
  }
}

/** The bench's load scenarios, and the two updateOrder ones, which A/B alone runs: its orders are placed through each build's API first. */
const AB_SCENARIOS: readonly LoadScenario[] = [...LOAD_SCENARIOS, updateOrder, updateOrderUnchanged]
// the scenarios that patch orders placed before the load
const UPDATES: readonly LoadScenario[] = [updateOrder, updateOrderUnchanged]

/** The scenario name that measures start-up instead of a load. */
const COLD_START = 'coldStart'

type Start = { ms: number, cpuMs: number | undefined, rssMb: number | undefined }

/**
 * The two builds started in turn, `plan.rounds` times each, with their paired ratios; with `peers`, the contract-equal
 * peer started after each pair (on the working tree's store), and each build's paired ratios to it.
 */
async function compareColdStarts (context: BenchContext, stores: { base: BenchStore, work: BenchStore }, baseName: string, baseDir: string, peers: boolean): Promise<void> {
  const runs: Record<'base' | 'work' | 'contract', Start[]> = { base: [], work: [], contract: [] }
  for (let round = 0; round < context.plan.rounds; round++) {
    const starts = [['base', stores.base, { installation: baseDir }], ['work', stores.work, {}], ...peers ? [['contract', stores.work, { contractPeer: true }] as const] : []] as const
    for (const [role, store, options] of starts) {
      const result = await coldStart(context, store, { starts: 1, ...options })
      runs[role].push({ ms: result.coldStartMs[0] as number, cpuMs: result.coldStartCpuMs[0], rssMb: result.idleRssMb[0] })
    }
  }
  const paired = (a: Start[], b: Start[], figure: (run: Start) => number | undefined): string => {
    const ratio = median(a.map((run, i) => {
      const x = figure(run)
      const y = b[i] === undefined ? undefined : figure(b[i])
      return x === undefined || y === undefined || y === 0 ? undefined : x / y
    }))
    return ratio === undefined ? '–' : ratio.toFixed(3)
  }
  const ratios = (a: Start[], b: Start[]): string => `time ${paired(a, b, (run) => run.ms)}, CPU ${paired(a, b, (run) => run.cpuMs)}, RSS ${paired(a, b, (run) => run.rssMb)}`
  const of = (role: keyof typeof runs): string => `${Math.round(median(runs[role].map((run) => run.ms)) ?? NaN)} ms to the first 200, ` +
    `${Math.round(median(runs[role].map((run) => run.cpuMs)) ?? NaN)} ms of CPU, idle RSS ${(median(runs[role].map((run) => run.rssMb)) ?? NaN).toFixed(1)} MB`
  process.stdout.write(`coldStart (${context.plan.rounds} starts each, medians): ${baseName} ${of('base')}; working tree ${of('work')}; ` +
    `× base: ${ratios(runs.work, runs.base)}\n`)
  if (peers) {
    process.stdout.write(`coldStart, contract-equal peer: ${of('contract')}; working tree × it: ${ratios(runs.work, runs.contract)}; ` +
      `${baseName} × it: ${ratios(runs.base, runs.contract)}\n`)
  }
}

/**
 * The base installation's build and the working tree's, alternated scenario by scenario, each on its own
 * freshly seeded store, seeded alike: a build refuses a store that a newer schema migrated, so two
 * revisions on either side of a migration cannot share one.
 */
async function compare (context: BenchContext, store: StoreKind, what: { scenarios: readonly LoadScenario[], coldStarts: boolean, env: Record<string, string>, peers: boolean }, baseName: string, baseDir: string): Promise<void> {
  const { apiKey } = context
  const { scenarios, env } = what
  const migrateWith = (installation?: string) => async (url: string): Promise<void> => {
    await stopServer(await startService(url, apiKey, installation === undefined ? {} : { installation }))
  }
  // placeOrder's pets, and updateOrder's (the block's last): each build orders the service's block of its own store
  const orders = scenarios.some((scenario) => scenario.name === placeOrder.name || UPDATES.includes(scenario))
  // the peers take their own block of the working tree's store, beside the working build's; the base's store is laid out
  // alike, so that the service's block has the same ids in both (the loads of both builds are made from the working store's)
  const orderable = { servers: !orders ? [] : what.peers ? ['peer', 'service'] as const : ['service'] as const, petsEach: orderablePetsPerServer(context.plan) }
  const seededBase = await seededStore(store, SEED_PETS, context.pgServerUrl, migrateWith(baseDir), orderable)
  const seededWork = await seededStore(store, SEED_PETS, context.pgServerUrl, migrateWith(), orderable).catch(async (error: unknown) => {
    await seededBase.drop()
    throw error
  })
  try {
    if (what.coldStarts) await compareColdStarts(context, { base: seededBase, work: seededWork }, baseName, baseDir, what.peers)
    if (scenarios.length === 0) return
    const facts = await storeFacts(seededWork)
    const a = await startService(seededBase.url, apiKey, { installation: baseDir, env })
    const b = await startService(seededWork.url, apiKey, { env })
    const peers = what.peers
      ? { bare: await startBare(), peer: await startPeer(seededWork.url, apiKey), contract: await startContractPeer(seededWork.url, apiKey) }
      : undefined
    try {
      // updateOrder's orders, placed on each build before any load (so that placeOrder's block is the same for both)
      const updatable = scenarios.some((scenario) => UPDATES.includes(scenario)) ? await ordersToUpdate([a, b], context.headers, facts) : undefined
      for (const scenario of scenarios) {
        const rounds = await alternate(context, scenario.name, [
          { role: 'base', server: a, requests: scenario.requests('service', { ...facts, ordersToUpdate: updatable?.[0] }) },
          { role: 'work', server: b, requests: scenario.requests('service', { ...facts, ordersToUpdate: updatable?.[1] }) },
          ...peers === undefined || UPDATES.includes(scenario)
            ? []
            : [
                { role: 'bare', server: peers.bare, requests: scenario.requests('bare', facts) },
                { role: 'peer', server: peers.peer, requests: scenario.requests('peer', facts) },
                ...scenario.contractPeer === false ? [] : [{ role: 'contract', server: peers.contract, requests: scenario.requests('contract', facts) }]
              ]
        ])
        const failed = [...rounds.base ?? [], ...rounds.work ?? []].reduce((sum, m) => sum + m.non2xx + m.errors, 0)
        if (scenario.every2xx === true && failed > 0) throw new Error(`${scenario.name}: ${failed} answers were not 2xx, so it measured something else than its name`)
        const cpuRatio = pairedRatio(rounds.work, rounds.base, (m) => m.cpuUsPerRequest)
        const rpsRatio = pairedRatio(rounds.work, rounds.base, (m) => m.reqPerSec)
        process.stdout.write(`${scenario.name} (${store}): ${baseName} ${figures(rounds.base)}; working tree ${figures(rounds.work)}; ` +
          `CPU/request × base ${cpuRatio === undefined ? '–' : cpuRatio.toFixed(3)}; req/s × base ${rpsRatio === undefined ? '–' : rpsRatio.toFixed(3)}\n`)
        if (rounds.contract !== undefined || rounds.peer !== undefined) process.stdout.write(beside(scenario.name, store, baseName, rounds))
      }
    } finally {
      await stopServer(a)
      await stopServer(b)
      for (const server of Object.values(peers ?? {})) await stopServer(server)
    }
  } finally {
    await killAll()
    await seededBase.drop()
    await seededWork.drop()
  }
}

/** The peers' figures of a scenario's rounds, and each build's CPU per request × theirs (paired within rounds). */
function beside (name: string, store: StoreKind, baseName: string, rounds: Record<string, Measurement[]>): string {
  const cpu = (m: Measurement): number | undefined => m.cpuUsPerRequest
  const ratio = (a: string, b: string): string => pairedRatio(rounds[a], rounds[b], cpu)?.toFixed(3) ?? '–'
  const others = (['contract', 'peer', 'bare'] as const).filter((role) => rounds[role] !== undefined)
  return `${name} (${store}), beside: ${others.map((role) => `${role} ${figures(rounds[role])}`).join('; ')}; CPU/request ` +
    `${others.map((role) => `× ${role}: working tree ${ratio('work', role)}, ${baseName} ${ratio('base', role)}`).join('; ')}\n`
}

/** Places updateOrder's orders on each of `servers`, in turn; their id ranges, in the same order. */
async function ordersToUpdate (servers: readonly ServerProcess[], headers: Readonly<Record<string, string>>, facts: StoreFacts): Promise<IdRange[]> {
  const pets = facts.orderable.service
  if (pets === undefined) throw new Error('updateOrder: the store has no block of pets to order')
  const ranges: IdRange[] = []
  for (const server of servers) ranges.push(await placeOrdersToUpdate(server, headers, pets))
  log(`updateOrder: placed ${ranges.map(([first, last]) => `orders ${first}..${last}`).join(' and ')} to update`)
  return ranges
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  killAll().finally(() => { process.exit(1) }).catch(() => {})
})
