import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { KEYS, requestSet, seedStatements, SHARED_ENV, type SetRequest } from '../helpers/contract-requests.js'
import { diffAnswers, diffLogLines, exchange, headerOf, logLinesByRequest, scrapeSamples, storeRows, type Answer, type WireRequest } from '../helpers/contract-diff.js'
import { execSql, freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { childEnv, freePort, serverProcesses, ServerProcess } from '../helpers/processes.js'

/**
 * The benchmark's contract-equal peer (bench/peers/contract-equal/, started as a program) must answer what the
 * service answers: else "the service costs N × the peer" would compare unequal work. Both run on stores seeded
 * alike, get the same requests in lockstep, and everything observable is compared.
 */

// above any key's share of the set but the burst's, which sends one more than it
const PER_KEY_QUOTA = 100
const COUNTERS = [
  'petstore_http_requests_total', 'petstore_http_request_duration_seconds_count', 'petstore_deprecated_operation_calls_total',
  'petstore_rate_limit_rejections_total', 'petstore_insufficient_scope_total'
]

interface Exchanged { request: WireRequest, service: Answer, peer: Answer }

/**
 * Sends every request of the set to both, the service first; a request made from earlier answers is made from the service's.
 * The burst's 429 says the whole seconds left of its key's window ("retry in N s"), a window each server starts at the burst's
 * first request, a few ms apart: the request over the quota goes out mid-second of that window, where both round alike.
 */
async function sendInLockstep (set: readonly SetRequest[], servicePort: number, peerPort: number): Promise<Exchanged[]> {
  const answers = new Map<string, Answer>()
  const exchanged: Exchanged[] = []
  let burstStarted = 0
  for (const item of set) {
    const request = typeof item === 'function' ? item(answers) : item
    if (request.name === 'burst 1') burstStarted = Date.now()
    if (request.name === `burst ${PER_KEY_QUOTA + 1}`) {
      while ((Date.now() - burstStarted) % 1000 < 300 || (Date.now() - burstStarted) % 1000 > 700) await delay(5)
    }
    const service = await exchange(servicePort, request)
    const peer = await exchange(peerPort, request)
    answers.set(request.name, service)
    exchanged.push({ request, service, peer })
  }
  return exchanged
}

for (const kind of testStores()) {
  describe(`the contract-equal peer (${kind})`, () => {
    test('When the service and the peer get the same requests on stores seeded alike, then every status, header, body, log line, counter and row is the same', { timeout: 180_000 }, async (t) => {
      const servers = serverProcesses(t)
      const [serviceStore, peerStore] = [await freshDatabaseUrl(t, kind), await freshDatabaseUrl(t, kind)]
      // the service's migrations make both stores; the seed is the same SQL, the cursor secret the service's
      for (const url of [serviceStore, peerStore]) await (await servers.start({ DATABASE_URL: url, PETSTORE_API_KEYS: KEYS.writeEnv })).stop()
      for (const url of [serviceStore, peerStore]) for (const { sql, params } of seedStatements()) await execSql(url, sql, params)
      const [secret] = await execSql(serviceStore, "SELECT value FROM settings WHERE name = 'cursor_secret'")
      await execSql(peerStore, "UPDATE settings SET value = $1 WHERE name = 'cursor_secret'", [secret?.value])

      const env = { ...SHARED_ENV, RATE_LIMIT_MAX: String(PER_KEY_QUOTA) }
      const [serviceMetrics, peerPort, peerMetrics] = [await freePort(), await freePort(), await freePort()]
      const service = await servers.start({ ...env, DATABASE_URL: serviceStore, METRICS_PORT: String(serviceMetrics) })
      const peer = new ServerProcess({
        script: 'bench/peers/contract-equal/server.ts',
        env: childEnv({ ...env, HOST: '127.0.0.1', PORT: String(peerPort), DATABASE_URL: peerStore, METRICS_PORT: String(peerMetrics) }),
        port: peerPort,
        label: 'the contract-equal peer'
      })
      t.after(async () => { await peer.kill() })
      await peer.waitUntilHealthy(60_000)

      const started = Date.now()
      const exchanged = await sendInLockstep(requestSet(PER_KEY_QUOTA), service.port, peerPort)
      const differences = exchanged.flatMap(({ request, service, peer }) => diffAnswers(request, service, peer))

      const [ourCounters, theirCounters] = [await scrapeSamples(`http://127.0.0.1:${serviceMetrics}/metrics`, COUNTERS), await scrapeSamples(`http://127.0.0.1:${peerMetrics}/metrics`, COUNTERS)]
      for (const series of new Set([...ourCounters.keys(), ...theirCounters.keys()])) {
        if (ourCounters.get(series) !== theirCounters.get(series)) differences.push(`counter ${series}: ${ourCounters.get(series) ?? 0} from the service, ${theirCounters.get(series) ?? 0} from the peer`)
      }
      const [ourRows, theirRows] = [await storeRows(serviceStore), await storeRows(peerStore)]
      for (const table of ['pets', 'events', 'keys'] as const) {
        if (!isSame(ourRows[table], theirRows[table])) differences.push(`${table}: ${JSON.stringify(ourRows[table].slice(-12))} in the service's store, ${JSON.stringify(theirRows[table].slice(-12))} in the peer's`)
      }

      // stopped, each has written every line
      await Promise.all([service.stop(), peer.stop()])
      const [ourLines, theirLines] = [logLinesByRequest(service.stdout), logLinesByRequest(peer.stdout)]
      for (const { request, service, peer } of exchanged) {
        differences.push(...diffLogLines(request, ourLines.get(headerOf(service, 'x-request-id') ?? '') ?? [], theirLines.get(headerOf(peer, 'x-request-id') ?? '') ?? []))
      }

      assert.deepEqual(differences, [])
      // what was compared is what the set is for: every kind of answer, the writes, the keys' use, one access line each
      const statuses = new Set(exchanged.map(({ service }) => service.status))
      for (const status of [200, 201, 304, 400, 401, 403, 404, 405, 413, 415, 429]) assert.ok(statuses.has(status), `no request of the set was answered ${status}`)
      assert.equal(ourRows.events.length, 9)
      assert.ok(ourRows.occurredAt.every((at) => at >= started - 1000 && at <= Date.now()), 'an event occurred outside the run')
      assert.ok(theirRows.occurredAt.every((at) => at >= started - 1000 && at <= Date.now()), 'a peer event occurred outside the run')
      assert.deepEqual(ourRows.keys.map((row) => JSON.parse(row).slice(1) as unknown[]), [
        ['ci-writer', 'write', true, true], ['dashboard', 'read', true, true], ['retired', 'write', false, false], ['burst', 'write', true, true]
      ])
      for (const { service } of exchanged) {
        const lines = ourLines.get(headerOf(service, 'x-request-id') ?? '') ?? []
        assert.equal(lines.filter((line) => line.msg === 'request completed').length, 1)
      }
    })
  })
}

function isSame (a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((row, i) => row === b[i])
}
