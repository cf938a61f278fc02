import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, test } from 'node:test'
import { freePort, PROJECT_ROOT, serverProcesses } from '../helpers/processes.js'
import { strongApiKey } from '../helpers/live-server.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { amqpUrl, natsUrl } from '../helpers/buses.js'

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
    assert.match(checked.stdout, /SUCCESS: 12 rules found/)
    const tested = await run(promtool!, ['test', 'rules', ALERT_TESTS])
    assert.match(tested.stdout, /SUCCESS/)
  })

  test('When each alert is read, then it has a runbook line in docs/operations.md and a runbook_url to a heading there from the docs\' base URL', async () => {
    const operations = await readFile(join(PROJECT_ROOT, 'docs/operations.md'), 'utf8')
    const { parse } = await import('yaml')
    const rules = (parse(await readFile(ALERTS, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string, annotations: Record<string, string> }> }> }).groups.flatMap((group) => group.rules)
    assert.equal(rules.length, 12)
    // the anchors a Markdown renderer (GitHub's, any docs site's) gives the headings
    const anchors = new Set([...operations.matchAll(/^#+ (.+)$/gm)].map((match) => match[1]!.toLowerCase().replace(/[^\w\s-]/g, '').trim().replace(/\s+/g, '-')))
    for (const { alert, annotations } of rules) {
      assert.match(operations, new RegExp(`^- \\*\\*${alert}\\*\\*`, 'm'), `no runbook line for ${alert}`)
      const url = /^\{\{ \$externalLabels\.petstore_docs_url \}\}\/operations\.md#([\w-]+)$/.exec(annotations.runbook_url ?? '')
      assert.ok(url !== null, `${alert}: its runbook_url is not the docs' base URL and an anchor of operations.md: ${annotations.runbook_url ?? '(none)'}`)
      assert.ok(anchors.has(url[1]!), `${alert}: docs/operations.md has no heading #${url[1]!}`)
    }
  })

  test('When a live instance has answered probes, documents and API calls, then the latency alert and panels leave out exactly the probes\' and documents\' operations, and known counters read 0 before any increment', async (t) => {
    const metricsPort = await freePort()
    const readKey = strongApiKey()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), METRICS_PORT: String(metricsPort), PETSTORE_API_KEYS: strongApiKey(), PETSTORE_READ_API_KEYS: readKey })
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const labelsOf = (text: string): Set<string> => new Set([...text.matchAll(/^petstore_http_requests_total\{operation="([^"]+)"/gm)].map((match) => match[1]!))
    const counters = await scrape()
    for (const path of ['/healthz', '/readyz', '/v1/openapi.json', '/v1/openapi.yaml', '/v1/asyncapi.json', '/v1/asyncapi.yaml', '/docs', '/docs/', '/docs/json', '/docs/static/index.html']) await (await fetch(`${server.baseUrl}${path}`, { redirect: 'manual' })).arrayBuffer()
    const probesAndDocuments = labelsOf(await scrape())
    for (const path of ['/v1/pets', '/v1/pets/1', '/v1/categories']) await (await fetch(`${server.baseUrl}${path}`)).arrayBuffer()
    const api = [...labelsOf(await scrape())].filter((label) => !probesAndDocuments.has(label) && label !== 'unmatched')
    await (await fetch(`${server.baseUrl}/v1/pets`, { headers: { authorization: `Bearer ${readKey}` } })).arrayBuffer()
    const afterReadKey = (await scrape()).split('\n')
    await server.stop()

    assert.ok(api.length >= 2, `too few API operations answered: ${api.join(', ')}`)
    const filters = (await expressions()).filter(({ expr }) => expr.includes('petstore_http_request_duration_seconds') && expr.includes('operation!~'))
    assert.ok(filters.some(({ where }) => where === 'alert PetstoreHighLatency'), 'the latency alert does not leave out the probes')
    for (const { where, expr } of filters) {
      // PromQL's regular expressions are anchored at both ends
      const excluded = new RegExp(`^(?:${/operation!~"([^"]+)"/.exec(expr)![1]!})$`)
      for (const label of probesAndDocuments) assert.match(label, excluded, `${where} counts ${label}, a probe or document`)
      for (const label of api) assert.doesNotMatch(label, excluded, `${where} leaves out ${label}, an API operation`)
    }
    // series whose labels are all known at start exist from the start (Prometheus's advice: rate() then sees the first increment)
    for (const series of ['petstore_rate_limit_rejections_total{policy="per-key"} 0', 'petstore_rate_limit_rejections_total{policy="failed-auth"} 0',
      'petstore_pet_transitions_total{from="available",to="pending"} 0', 'petstore_pet_transitions_total{from="available",to="sold"} 0',
      'petstore_pet_transitions_total{from="pending",to="available"} 0', 'petstore_pet_transitions_total{from="pending",to="sold"} 0',
      'petstore_webhook_delivery_lag_seconds_count 0', 'petstore_webhook_delivery_lag_seconds_bucket{le="+Inf"} 0']) {
      assert.ok(counters.split('\n').includes(series), `${series} is not exported before its first increment`)
    }
    // a read key's refusals, from its first request (a read), for every operation that writes
    const refusable = afterReadKey.filter((line) => /^petstore_insufficient_scope_total\{.*role="read"\} 0$/.test(line)).map((line) => /operation="([^"]+)"/.exec(line)![1]!)
    for (const operation of ['createPet', 'updatePet']) assert.ok(refusable.includes(operation), `no insufficient_scope series at 0 for ${operation}: ${refusable.join(', ')}`)
  })

  test('When a live instance with both buses is scraped, then every metric the alert rules and the dashboard name is one it exports', async (t) => {
    const metricsPort = await freePort()
    // a capability's metrics exist where it runs: the buses' with a bus configured (no broker is reached until an event waits)
    const server = await serverProcesses(t).start({
      DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), METRICS_PORT: String(metricsPort), PETSTORE_API_KEYS: strongApiKey(), NATS_URL: natsUrl(), AMQP_URL: amqpUrl()
    })
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
