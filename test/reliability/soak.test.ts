import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { formatReport, runSoak, type SoakReport, type SoakStore } from '../../scripts/soak.js'
import { requiresPostgres, TEST_DATABASE_URL } from '../helpers/databases.js'

// The short version of `npm run soak`: the same mixed load on a real server process, long enough
// for thousands of requests, short enough for CI (about 10 s on each store).
// The memory baseline is taken half-way: in its first seconds under load the server's RSS climbs
// by some 30-40 MB while V8 sizes its heap (it falls back after the first full collection, ~7-10 s
// in; longer on Node 24), so a baseline taken after 2 s would measure that warm-up rather than a leak.
const RUNS: Array<{ store: SoakStore, durationSeconds: number, options: { skip: string | false } }> = [
  { store: 'sqlite', durationSeconds: 8, options: { skip: false } },
  { store: 'postgres', durationSeconds: 8, options: requiresPostgres() }
]
const MAX_GROWTH_MB = 50
const MIN_REQUESTS = 1000

function assertSoakPassed (report: SoakReport): void {
  const summary = formatReport(report)
  assert.equal(report.unexpectedStatuses, 0, `every request must get its kind's status\n${summary}`)
  assert.equal(report.withoutRequestId, 0, `every answer must echo its X-Request-Id\n${summary}`)
  assert.equal(report.misattributed, 0, `no answer may close a connection it should keep\n${summary}`)
  assert.equal(report.errors, 0, `no connection error or timeout\n${summary}`)
  assert.ok(report.requests.total > MIN_REQUESTS, `more than ${MIN_REQUESTS} requests\n${summary}`)
  for (const [kind, counts] of Object.entries(report.requests.byKind)) assert.ok(counts.total > 0, `some ${kind} requests were answered\n${summary}`)
  assert.ok(report.memory.rssGrowthMb !== undefined && report.memory.rssGrowthMb < MAX_GROWTH_MB, `RSS growth after warm-up under ${MAX_GROWTH_MB} MB\n${summary}`)
  assert.equal(report.server.errorLines, 0, `the server logged no error\n${summary}`)
  assert.equal(report.server.exitCode, 0, `the server exits 0 on SIGTERM\n${summary}`)
  assert.deepEqual(report.failures, [], summary)
  assert.equal(report.ok, true, summary)
}

describe('soak (short): mixed load on a real server', () => {
  for (const { store, durationSeconds, options } of RUNS) {
    test(`${durationSeconds} s of lists, creates, reads and bad requests get only their expected statuses, and memory stays bounded (${store})`,
      { ...options, timeout: 60_000 }, async () => {
        const report = await runSoak({
          store,
          durationSeconds,
          warmupSeconds: durationSeconds / 2,
          connections: 10,
          maxGrowthMb: MAX_GROWTH_MB,
          ...(store === 'postgres' && TEST_DATABASE_URL !== undefined ? { postgresUrl: TEST_DATABASE_URL } : {})
        })
        assertSoakPassed(report)
      })
  }
})
