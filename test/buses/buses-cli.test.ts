import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { describe, test } from 'node:test'
import { deploymentIdOf } from '../../src/infra/database/deployment-id.js'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { NATS_ADDRESS, natsReader } from '../helpers/buses.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { childEnv, runCli, within } from '../helpers/processes.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// `npx petstore buses`: what an operator sees of each bus, its position, lag, last error and publisher.

interface BusesJson {
  database: string
  source: string
  buses: Array<{ bus: string, publishedThrough: number, newestEventId: number, waitingEvents: number, oldestWaitingAt?: string, publisher?: string, lastError?: string, configuredHere: string | null }>
}

for (const store of testStores()) {
  describe(`petstore buses (${store})`, () => {
    test('When no server has published, then it says there is no bus and exits 0', async (t) => {
      const env = childEnv({ DATABASE_URL: await freshDatabaseUrl(t, store), LOG_LEVEL: 'silent' })
      assert.equal((await runCli(['migrate'], env)).code, 0)
      const result = await runCli(['buses'], env)
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /^No message bus in .+: a server with NATS_URL or AMQP_URL set lists its bus here once it has started\.\n$/)
    })

    test('When the broker is unreachable, then it shows the source, the position, the events waiting, the error and no instance holding on to the bus; once reachable, nothing waits', async (t) => {
      const proxy = await startTcpProxy(t, NATS_ADDRESS)
      proxy.cut('refuse')
      const reader = await natsReader(t, proxy.port)
      const api = await buildTestApp(t, { store, env: reader.env })
      for (let n = 0; n < 5; n++) {
        const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `pet-${n}`, categoryId: n }) })
        assert.equal(res.statusCode, 201, res.body)
      }
      const env = childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent', ...reader.env })
      const buses = async (): Promise<BusesJson> => {
        const result = await runCli(['buses', '--json'], env)
        assert.equal(result.code, 0, result.stderr)
        return JSON.parse(result.stdout) as BusesJson
      }
      const failing = await within(30_000, 'no failure was recorded', (async () => {
        for (;;) {
          const nats = (await buses()).buses.find(({ bus }) => bus === 'nats')
          if (nats?.lastError !== undefined) return nats
        }
      })())
      assert.equal(failing.publishedThrough, 0)
      assert.equal(failing.newestEventId, 5)
      assert.equal(failing.waitingEvents, 5)
      assert.ok(failing.oldestWaitingAt !== undefined)
      // a relay that failed gives the lease up (another instance may publish): at most a retry holds it for a moment
      assert.ok(failing.publisher === undefined || failing.publisher === `${hostname()}:${process.pid}`, failing.publisher)
      assert.match(failing.lastError ?? '', /ECONNREFUSED|ECONNRESET|CONNECTION_REFUSED|closed|connect/i)
      assert.equal(failing.configuredHere, `nats://127.0.0.1:${proxy.port}, stream ${reader.env.NATS_STREAM}, subjects ${reader.env.NATS_SUBJECT_PREFIX}.>`)

      const text = await runCli(['buses'], env)
      assert.equal(text.code, 0, text.stderr)
      assert.match(text.stdout, new RegExp(`^nats \\(here: nats://127\\.0\\.0\\.1:${proxy.port}, stream ${reader.env.NATS_STREAM}, subjects `, 'm'))
      assert.match(text.stdout, /^ {2}position +0 \(nothing published yet\)$/m)
      assert.match(text.stdout, /^ {2}waiting +5 events, the oldest committed \d+ s ago, \d{4}-/m)
      assert.match(text.stdout, new RegExp(`^  publisher +(none \\(no instance holds the lease|${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${process.pid} \\(lease until )`, 'm'))
      const source = `urn:uuid:${await deploymentIdOf(api.app.database)}`
      assert.match(text.stdout, new RegExp(`^Message buses in .+, every event's CloudEvents source ${source}:$`, 'm'))
      assert.equal((await buses()).source, source)
      assert.match(text.stdout, /^ {2}last error +\d+ s ago, \d{4}-.*: .+$/m)

      proxy.heal()
      await reader.waitFor(5)
      const caughtUp = await within(30_000, 'the position did not move', (async () => {
        for (;;) {
          const nats = (await buses()).buses.find(({ bus }) => bus === 'nats')
          if (nats?.waitingEvents === 0) return nats
        }
      })())
      assert.equal(caughtUp.publishedThrough, 5)
      const withoutConfiguration = await runCli(['buses'], childEnv({ DATABASE_URL: api.databaseUrl, LOG_LEVEL: 'silent' }))
      assert.match(withoutConfiguration.stdout, /^nats \(not configured here\)$/m)
      assert.match(withoutConfiguration.stdout, /^ {2}waiting +none$/m)
    })
  })
}
