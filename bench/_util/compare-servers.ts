import type { StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import { scenarioRow, type ScenarioRow } from '../report.js'
import type { BenchContext } from './bench-context.js'
import type { LoadScenario } from './load-scenario.js'
import { alternate } from './measure.js'
import { log } from './plan.js'
import { metricsUrlOf, type Role } from './servers.js'
import type { StoreFacts } from './stores.js'

/** Sends each distinct request of `scenario` once by hand: a scenario whose requests fail would measure errors. */
async function verify (context: BenchContext, scenario: LoadScenario, role: Role, server: ServerProcess, facts: StoreFacts): Promise<void> {
  for (const request of scenario.requests(role, facts)) {
    const path = request.randomIdRange === undefined ? request.path : `${request.path}${request.randomIdRange[1]}`
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: request.method,
      headers: { ...context.headers, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: request.body,
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    if (response.status < 200 || response.status > 299) throw new Error(`${server.label}: ${request.method} ${path} answered ${response.status}: ${text.slice(0, 300)}`)
    const problem = role === 'bare' || request.method !== 'GET' ? undefined : scenario.verify?.(JSON.parse(text) as unknown)
    if (problem !== undefined) throw new Error(`${server.label}: ${request.method} ${path}: ${problem}`)
  }
}

/**
 * Each scenario on one store, the bare baseline, the peer and the service measured in turn for
 * every round; a scenario that fails is recorded in its row and the next one runs.
 */
export async function compareServers (context: BenchContext, store: StoreKind, facts: StoreFacts, servers: Record<Role, ServerProcess>,
  scenarios: readonly LoadScenario[], failures: string[]): Promise<ScenarioRow[]> {
  const rows: ScenarioRow[] = []
  for (const scenario of scenarios) {
    const label = `${scenario.name} (${store})`
    try {
      const roles = ['bare', 'peer', 'service'] as const
      for (const role of roles) await verify(context, scenario, role, servers[role], facts)
      const rounds = await alternate(context, label, roles.map((role) => ({ role, server: servers[role], requests: scenario.requests(role, facts), metricsUrl: metricsUrlOf(servers[role]) })))
      rows.push(scenarioRow(scenario.name, store, scenario.description, rounds))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      log(`${label} FAILED: ${message}`)
      failures.push(`${label}: ${message}`)
      rows.push({ ...scenarioRow(scenario.name, store, scenario.description, {}), error: message })
    }
  }
  return rows
}
