import { countedBody, type LoadRequest } from '../../tools/harness/load-spec.js'
import type { StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import { scenarioRow, type ScenarioRow } from '../report.js'
import type { BenchContext } from './bench-context.js'
import type { LoadScenario } from './load-scenario.js'
import { alternate, type Rounds } from './measure.js'
import { log } from './plan.js'
import { metricsUrlOf, type Role } from './servers.js'
import type { StoreFacts } from './stores.js'

/**
 * Sends each distinct request of `requests` once by hand: a scenario whose requests fail would measure errors.
 * A counting body's request takes its id from the sequence, as the load would.
 */
async function verify (context: BenchContext, scenario: LoadScenario, role: Role, server: ServerProcess, requests: readonly LoadRequest[]): Promise<void> {
  for (const request of requests) {
    const path = request.randomIdRange === undefined ? request.path : `${request.path}${request.randomIdRange[1]}`
    const counting = request.countingBody
    const body = counting === undefined ? request.body : countedBody(counting, counting.ids.take(1))
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: request.method,
      headers: { ...context.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    if (response.status < 200 || response.status > 299) throw new Error(`${server.label}: ${request.method} ${path}${body === undefined ? '' : ` ${body}`} answered ${response.status}: ${text.slice(0, 300)}`)
    const problem = role === 'bare' || request.method !== 'GET' ? undefined : scenario.verify?.(JSON.parse(text) as unknown)
    if (problem !== undefined) throw new Error(`${server.label}: ${request.method} ${path}: ${problem}`)
  }
}

/** Why the rounds of a scenario that needs every answer 2xx do not count: the servers that answered otherwise. */
function non2xxProblem (rounds: Rounds): string | undefined {
  const failing = Object.entries(rounds)
    .map(([role, measurements]) => ({ role, non2xx: measurements.reduce((sum, m) => sum + m.non2xx, 0) }))
    .filter(({ non2xx }) => non2xx > 0)
  return failing.length === 0
    ? undefined
    : `non-2xx answers, which its req/s would count: ${failing.map(({ role, non2xx }) => `${role} ${non2xx}`).join(', ')}`
}

/** The servers of a store's rounds; the contract-equal peer only where it runs. */
export type Servers = Record<Exclude<Role, 'contract'>, ServerProcess> & { contract?: ServerProcess }

/**
 * Each scenario on one store, the bare baseline, the peer, the contract-equal peer (for the scenarios it serves) and
 * the service measured in turn for every round; a scenario that fails is recorded in its row and the next one runs.
 */
export async function compareServers (context: BenchContext, store: StoreKind, facts: StoreFacts, servers: Servers,
  scenarios: readonly LoadScenario[], failures: string[]): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = []
  for (const scenario of scenarios) {
    const label = `${scenario.name} (${store})`
    let rounds: Rounds = {}
    try {
      const contract = scenario.contractPeer === false ? undefined : servers.contract
      const measured: Array<{ role: Role, server: ServerProcess }> = [
        { role: 'bare', server: servers.bare },
        { role: 'peer', server: servers.peer },
        ...(contract === undefined ? [] : [{ role: 'contract' as const, server: contract }]),
        { role: 'service', server: servers.service }
      ]
      const contenders = measured.map(({ role, server }) => ({ role, server, requests: scenario.requests(role, facts), metricsUrl: metricsUrlOf(server) }))
      for (const { role, server, requests } of contenders) await verify(context, scenario, role, server, requests)
      rounds = await alternate(context, label, contenders)
      const problem = scenario.every2xx === true ? non2xxProblem(rounds) : undefined
      if (problem !== undefined) throw new Error(problem)
      rows.push(scenarioRow(scenario.name, store, scenario.description, rounds))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      log(`${label} FAILED: ${message}`)
      failures.push(`${label}: ${message}`)
      // the rounds measured, if any, stay in the per-server table with their non-2xx counts
      rows.push({ ...scenarioRow(scenario.name, store, scenario.description, rounds), error: message })
    }
  }
  return rows
}
