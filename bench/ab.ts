/**
 * A/B of two builds of the service: `npm run bench:ab -- --base <git revision>` measures the working
 * tree's build against the build of `<revision>`, alternated on one seeded store, with the bench's
 * instrument (wrk pinned, CPU time per request from schedstat, medians). It is how a performance lever
 * is judged before it is kept (docs/performance.md). Options: `--scenarios getPet,listPets`,
 * `--store sqlite|postgres`, `--rounds 4`, `--seconds 5`.
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
import { log, planFor, SEED_PETS } from './_util/plan.js'
import { killAll, startService, stopServer } from './_util/servers.js'
import { postgresServerUrl, seededStore, storeFacts } from './_util/stores.js'

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
      seconds: { type: 'string', default: '5' }
    }
  })
  const store = values.store as StoreKind
  const wanted = values.scenarios.split(',')
  const scenarios = LOAD_SCENARIOS.filter((scenario) => wanted.includes(scenario.name))
  if (scenarios.length === 0) throw new Error(`--scenarios: none of ${values.scenarios}; known: ${LOAD_SCENARIOS.map((s) => s.name).join(', ')}`)
  pinThisProcess(LOAD_GENERATOR_CPU)
  const plan = { ...planFor(false), rounds: Number(values.rounds), durationSeconds: Number(values.seconds), warmupSeconds: 2 }
  const apiKey = `bench_${randomBytes(32).toString('base64url')}`
  const context: BenchContext = { plan, generator: chooseLoadGenerator(log), apiKey, headers: { authorization: `Bearer ${apiKey}` }, pgServerUrl: postgresServerUrl() }

  await buildService()
  const base = await buildRevision(values.base)
  try {
    await compare(context, store, scenarios, values.base, base.dir)
  } finally {
    await base.remove()
  }
}

/**
 * The base installation's build and the working tree's, alternated scenario by scenario, each on its own
 * freshly seeded store, seeded alike: a build refuses a store that a newer schema migrated, so two
 * revisions on either side of a migration cannot share one.
 */
async function compare (context: BenchContext, store: StoreKind, scenarios: readonly LoadScenario[], baseName: string, baseDir: string): Promise<void> {
  const { apiKey } = context
  const migrateWith = (installation?: string) => async (url: string): Promise<void> => {
    await stopServer(await startService(url, apiKey, installation === undefined ? {} : { installation }))
  }
  const seededBase = await seededStore(store, SEED_PETS, context.pgServerUrl, migrateWith(baseDir))
  const seededWork = await seededStore(store, SEED_PETS, context.pgServerUrl, migrateWith()).catch(async (error: unknown) => {
    await seededBase.drop()
    throw error
  })
  try {
    const facts = await storeFacts(seededWork)
    const a = await startService(seededBase.url, apiKey, { installation: baseDir })
    const b = await startService(seededWork.url, apiKey)
    try {
      for (const scenario of scenarios) {
        const rounds = await alternate(context, scenario.name, [
          { role: 'base', server: a, requests: scenario.requests('service', facts) },
          { role: 'work', server: b, requests: scenario.requests('service', facts) }
        ])
        const cpuRatio = pairedRatio(rounds.work, rounds.base, (m) => m.cpuUsPerRequest)
        const rpsRatio = pairedRatio(rounds.work, rounds.base, (m) => m.reqPerSec)
        process.stdout.write(`${scenario.name} (${store}): ${baseName} ${figures(rounds.base)}; working tree ${figures(rounds.work)}; ` +
          `CPU/request × base ${cpuRatio === undefined ? '–' : cpuRatio.toFixed(3)}; req/s × base ${rpsRatio === undefined ? '–' : rpsRatio.toFixed(3)}\n`)
      }
    } finally {
      await stopServer(a)
      await stopServer(b)
    }
  } finally {
    await killAll()
    await seededBase.drop()
    await seededWork.drop()
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  killAll().finally(() => { process.exit(1) }).catch(() => {})
})
