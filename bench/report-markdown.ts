/**
 * The report written out: bench/results/latest.json and latest.md, with the tables docs/performance.md shows.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../tools/harness/project-root.js'
import { CONNECTIONS } from './_util/plan.js'
import { fmt, TARGETS, times, type Ratios, type Report } from './report.js'

const verdict = (met: boolean | undefined): string => met === undefined ? '–' : met ? 'met' : '**missed**'

/** The scenario table and the targets, as docs/performance.md shows them. */
export function docsTable (report: Report): string {
  const lines = [
    `${report.quick ? '**Quick run**' : 'Full run'} of ${report.date.slice(0, 10)} (\`npm run bench${report.quick ? ' -- --quick' : ''}\`): ` +
      `${report.settings.loadGenerator}${report.settings.loadGeneratorFallback === undefined ? '' : ' (FALLBACK: wrk was not available)'}, ${CONNECTIONS} connections, ` +
      `${report.settings.rounds} alternated rounds of ${report.settings.durationSeconds} s, medians; ${report.settings.pinning}.`,
    '',
    '| scenario | store | req/s | CPU µs/req | p50 ms | p99 ms | p99/p50 | loop lag p99 ms | req/s × bare | CPU/req × contract peer | CPU/req × peer | CPU/req × bare | ' +
      'contract peer req/s | contract peer CPU µs/req | peer req/s | peer CPU µs/req | peer p99 ms | peer p99/p50 | bare req/s | bare CPU µs/req | bare p99/p50 |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|'
  ]
  for (const row of report.rows) {
    const { service, peer, contract, bare } = row.figures
    if (row.error !== undefined) {
      lines.push(`| ${row.scenario} | ${row.store} | failed: ${row.error.split('\n')[0]?.slice(0, 100) ?? ''} |${' |'.repeat(18)}`)
      continue
    }
    lines.push(`| ${row.scenario} | ${row.store} | ${fmt(service?.reqPerSec)} | ${fmt(service?.cpuUsPerRequest, 1)} | ${fmt(service?.p50Ms, 2)} | ${fmt(service?.p99Ms, 2)} | ` +
      `${fmt(service?.p99OverP50, 2)} | ${fmt(service?.eventLoopLagP99Ms, 2)} | ${times(row.reqPerSecVsBare)} | ${times(row.cpuPerRequestVsContract)} | ${times(row.cpuPerRequestVsPeer)} | ` +
      `${times(row.ratios?.bare.cpuPerRequest)} | ${fmt(contract?.reqPerSec)} | ${fmt(contract?.cpuUsPerRequest, 1)} | ` +
      `${fmt(peer?.reqPerSec)} | ${fmt(peer?.cpuUsPerRequest, 1)} | ${fmt(peer?.p99Ms, 2)} | ${fmt(peer?.p99OverP50, 2)} | ` +
      `${fmt(bare?.reqPerSec)} | ${fmt(bare?.cpuUsPerRequest, 1)} | ${fmt(bare?.p99OverP50, 2)} |`)
  }
  lines.push('', '| target | measured | goal | |', '|---|--:|---|---|')
  for (const check of report.targets.filter((c) => c.perScenario === undefined)) lines.push(`| ${check.check} | ${check.measured} | ${check.target} | ${verdict(check.met)} |`)
  lines.push(everyScenario(report, 'p99', `every scenario's p99 at ${CONNECTIONS} connections`, `≤ ${TARGETS.p99Ms} ms`))
  lines.push(everyScenario(report, 'tail', 'every scenario\'s p99/p50', `≤ ${String(TARGETS.tailVsPeer)} × the plain peer's`))
  return `${lines.join('\n')}\n`
}

/** One row for a target every scenario has: which scenarios met it and which missed it (each in the scenario table). */
function everyScenario (report: Report, target: 'p99' | 'tail', name: string, goal: string): string {
  const checks = report.targets.filter((check) => check.perScenario?.target === target)
  const those = (met: boolean | undefined): string => checks.filter((check) => check.met === met).map((check) => check.perScenario?.scenario).join('; ')
  const parts = [['met by', those(true)], ['**missed** by', those(false)], ['not measured:', those(undefined)]].filter(([, list]) => list !== '')
  const verdictOfAll = checks.length === 0 || checks.some((check) => check.met === undefined) ? undefined : checks.every((check) => check.met === true)
  return `| ${name} | ${parts.map(([label, list]) => `${label ?? ''} ${list ?? ''}`).join('. ') || '–'} | ${goal} | ${verdict(verdictOfAll)} |`
}

/** Each scenario's own p99 and p99/p50 against their targets. */
function perScenarioTable (report: Report): string {
  const lines = ['| target | measured | goal | |', '|---|--:|---|---|']
  for (const check of report.targets.filter((c) => c.perScenario !== undefined)) lines.push(`| ${check.check} | ${check.measured} | ${check.target} | ${verdict(check.met)} |`)
  return `${lines.join('\n')}\n`
}

/**
 * The service's req/s, CPU per request, p50 and p99 against the bare baseline's, the peer's and the contract-equal
 * peer's of the same rounds (each the median over rounds of the ratio within a round).
 */
export function ratiosTable (report: Report): string {
  const lines = [
    '| scenario | store | req/s × bare | CPU/req × bare | p50 × bare | p99 × bare | req/s × peer | CPU/req × peer | p50 × peer | p99 × peer | ' +
      'req/s × contract peer | CPU/req × contract peer | p50 × contract peer | p99 × contract peer |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|'
  ]
  for (const row of report.rows.filter((r) => r.error === undefined)) {
    const of = (ratios: Ratios | undefined): string => [ratios?.reqPerSec, ratios?.cpuPerRequest, ratios?.p50, ratios?.p99].map(times).join(' | ')
    lines.push(`| ${row.scenario} | ${row.store} | ${of(row.ratios?.bare)} | ${of(row.ratios?.peer)} | ${of(row.ratios?.contract)} |`)
  }
  return `${lines.join('\n')}\n`
}

function markdown (report: Report): string {
  const m = report.machine
  const lines = [`# Benchmark ${report.quick ? '(quick)' : '(full)'}: ${report.date}`, '']
  if (report.settings.loadGeneratorFallback !== undefined) {
    lines.push(`> **WARNING: measured with autocannon, not wrk** (${report.settings.loadGeneratorFallback}). autocannon's single-process ceiling compresses every ratio; these figures do not compare with wrk's.`, '')
  }
  lines.push(`${m.cpuModel}, ${m.cores} cores, Node ${m.node}, ${m.os}. Elapsed: ${report.elapsedSeconds ?? '?'} s.`, '')
  lines.push('## Scenarios', '', docsTable(report))
  lines.push('## Every scenario\'s tail', '', perScenarioTable(report))
  lines.push('## The service against the bare baseline and the peers', '', 'Each ratio is the median over rounds of the ratio within a round.', '', ratiosTable(report))
  lines.push('## Per server', '', '| scenario | store | server | req/s | CPU µs/req | CPUs busy | p50 ms | p90 ms | p99 ms | p99/p50 | loop lag p99 ms | RSS MB | non-2xx / errors |', '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const row of report.rows) {
    for (const [role, f] of Object.entries(row.figures)) {
      lines.push(`| ${row.scenario} | ${row.store} | ${role} | ${fmt(f.reqPerSec)} | ${fmt(f.cpuUsPerRequest, 1)} | ${fmt(f.cpusBusy, 2)} | ${fmt(f.p50Ms, 2)} | ${fmt(f.p90Ms, 2)} | ${fmt(f.p99Ms, 2)} | ${fmt(f.p99OverP50, 2)} | ${fmt(f.eventLoopLagP99Ms, 2)} | ${fmt(f.rssMaxMb, 1)} | ${f.non2xx} / ${f.errors} |`)
    }
  }
  lines.push('', '## The service against itself', '', '| comparison | variant | req/s | CPU µs/req | p99 ms |', '|---|---|--:|--:|--:|')
  for (const pair of report.pairs) {
    if (pair.error !== undefined) lines.push(`| ${pair.comparison} | failed: ${pair.error.split('\n')[0]?.slice(0, 100) ?? ''} | | | |`)
    for (const role of pair.roles) {
      const f = pair.figures[role]
      if (f !== undefined) lines.push(`| ${pair.comparison} | ${role} | ${fmt(f.reqPerSec)} | ${fmt(f.cpuUsPerRequest, 1)} | ${fmt(f.p99Ms, 2)} |`)
    }
  }
  lines.push('', '## Other checks (reported, never enforced)', '', '| check | measured | target | |', '|---|--:|---|---|')
  for (const check of report.checks) lines.push(`| ${check.check} | ${check.measured} | ${check.target} | ${verdict(check.met)} |`)
  lines.push('', '## Timings the tests no longer assert (reported, never enforced)', '',
    'The tests check the behaviour; how fast it is, which they used to assert, is measured here (TIMING_TARGETS): the median of the runs against the target.', '',
    '| timing | measured | target | |', '|---|--:|---|---|')
  for (const check of report.timings) lines.push(`| ${check.check} | ${check.measured} | ${check.target} | ${verdict(check.met)} |`)
  const starts = (ms: number[], cpuMs: number[], rssMb: number[]): string => `${ms.map((one) => `${fmt(one)} ms`).join(', ') || '–'} ` +
    `(CPU by then: ${cpuMs.map((one) => `${fmt(one)} ms`).join(', ') || '–'}); idle RSS: ${rssMb.map((mb) => `${fmt(mb, 1)} MB`).join(', ') || '–'}`
  lines.push('', `Cold starts of the service: ${starts(report.coldStartMs, report.coldStartCpuMs, report.idleRssMb)}. ` +
    `Of the contract-equal peer, each just after one of the service's: ${starts(report.contractColdStartMs, report.contractColdStartCpuMs, report.contractIdleRssMb)}.`)
  lines.push('', '## Notes', '', ...report.notes.map((note) => `- ${note}`))
  if (report.harnessErrors.length > 0) lines.push('', '## What could not be measured', '', ...report.harnessErrors.map((error) => `- ${error.split('\n')[0] ?? ''}`))
  return `${lines.join('\n')}\n`
}

/** Writes bench/results/latest.json and latest.md; returns the markdown. */
export async function writeReport (report: Report, part?: string): Promise<string> {
  const dir = join(PROJECT_ROOT, 'bench', 'results')
  await mkdir(dir, { recursive: true })
  const md = markdown(report)
  // a partial run (--only) beside the full one, never over it
  const name = part === undefined ? 'latest' : `latest-${part}`
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`)
  await writeFile(join(dir, `${name}.md`), md)
  return md
}
