import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, test } from 'node:test'
import { freePort, PROJECT_ROOT, serverProcesses } from '../helpers/processes.js'
import { strongApiKey } from '../helpers/live-server.js'
import { freshDatabaseUrl } from '../helpers/databases.js'

const ALERTS = join(PROJECT_ROOT, 'deploy/prometheus/alerts.yml')
const ALERT_TESTS = join(PROJECT_ROOT, 'deploy/prometheus/alerts.test.yml')
const DASHBOARD = join(PROJECT_ROOT, 'deploy/grafana/petstore.json')
/** Series Prometheus makes itself, not the service. */
const PROMETHEUS_SERIES = new Set(['up'])

/** CI installs Debian's prometheus package and sets REQUIRE_PROMTOOL=1: there a missing promtool fails instead of skipping. */
async function findPromtool (): Promise<string | undefined> {
  try {
    await promisify(execFile)('promtool', ['--version'])
    return 'promtool'
  } catch {
    if (process.env.REQUIRE_PROMTOOL === '1') throw new Error('REQUIRE_PROMTOOL=1 but promtool is not installed (apt-get install prometheus)')
    return undefined
  }
}
const promtool = await findPromtool()

/** Every PromQL expression of the alert rules and the dashboard. */
async function expressions (): Promise<Array<{ where: string, expr: string }>> {
  const rules = await readFile(ALERTS, 'utf8')
  const { parse } = await import('yaml')
  const groups = (parse(rules) as { groups: Array<{ rules: Array<{ alert: string, expr: string }> }> }).groups
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Array<{ title: string, targets: Array<{ expr: string }> }>, templating: { list: Array<{ name: string, query?: unknown }> } }
  return [
    ...groups.flatMap((group) => group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }))),
    ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr }))),
    ...dashboard.templating.list.filter((variable) => typeof variable.query === 'string' && variable.query.includes('{'))
      .map((variable) => ({ where: `variable ${variable.name}`, expr: String(variable.query) }))
  ]
}

/** The metric names a PromQL expression selects: identifiers followed by a selector or range, label values and keywords aside. */
function metricNames (expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  return [...withoutStrings.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g)].map((match) => match[1]!)
    .filter((name) => !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'label_values'].includes(name))
}

describe('monitoring (deploy/prometheus, deploy/grafana)', () => {
  test('When promtool checks the alert rules and runs their unit tests, then both pass', { skip: promtool === undefined ? 'promtool is not installed (apt-get install prometheus); CI sets REQUIRE_PROMTOOL=1' : false }, async () => {
    const run = promisify(execFile)
    const checked = await run(promtool!, ['check', 'rules', ALERTS])
    assert.match(checked.stdout, /SUCCESS: 9 rules found/)
    const tested = await run(promtool!, ['test', 'rules', ALERT_TESTS])
    assert.match(tested.stdout, /SUCCESS/)
  })

  test('When each alert is read, then it has a runbook line in docs/operations.md', async () => {
    const operations = await readFile(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8')
    const alerts = [...(await readFile(ALERTS, 'utf8')).matchAll(/- alert: (\w+)/g)].map((match) => match[1]!)
    assert.equal(alerts.length, 9)
    for (const alert of alerts) assert.match(operations, new RegExp(`^- \\*\\*${alert}\\*\\*`, 'm'), `no runbook line for ${alert}`)
  })

  test('When a live instance is scraped, then every metric the alert rules and the dashboard name is one it exports', async (t) => {
    const metricsPort = await freePort()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), METRICS_PORT: String(metricsPort), PETSTORE_API_KEYS: strongApiKey() })
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    await server.stop()
    const exported = new Set<string>()
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(name!)
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${name!}${suffix}`)
    }

    const all = await expressions()
    assert.ok(all.length > 15, `only ${all.length} expressions found`)
    for (const { where, expr } of all) {
      const names = metricNames(expr)
      assert.ok(names.length > 0, `${where} names no metric: ${expr}`)
      const unknown = names.filter((name) => !exported.has(name) && !PROMETHEUS_SERIES.has(name))
      assert.deepEqual(unknown, [], `${where} names metrics the service does not export`)
    }
  })
})
