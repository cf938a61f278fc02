import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WebhookEndpointRecord } from '../../src/capabilities/webhooks/store/webhook-store.js'
import { closeBeforeDrop, testStores } from '../helpers/databases.js'
import { dnsAnswersEnv } from '../helpers/dns-answers.js'
import { isolatedNode, NETWORK_ISOLATION_REQUIRED, networkIsolationMissing, postgresOverUnixSocket } from '../helpers/isolated-network.js'
import { childEnv, freePort, runCli, ServerProcess } from '../helpers/processes.js'
import { openStores } from '../helpers/stores.js'

// The address check at delivery, on the real server with private networks refused (the default). The
// server runs in a network namespace of its own (unshare -n): should the check let a request through,
// its connection to 10.1.2.3 or 169.254.169.254 fails there at once (ENETUNREACH), and no packet
// leaves the machine. Names are in the reserved .test domain and answered per process, never by a resolver.
const PUBLIC = '93.184.215.14'
const AT_ADD = { 'hooks.private.test': PUBLIC, 'hooks.metadata.test': PUBLIC }
const AT_DELIVERY = { 'hooks.private.test': '10.1.2.3', 'hooks.metadata.test': '169.254.169.254' }
// skipped where no process can be isolated, except under REQUIRE_NETWORK_ISOLATION=1 (CI), where it fails
const ISOLATION_MISSING = networkIsolationMissing()
const SKIP = ISOLATION_MISSING === undefined || NETWORK_ISOLATION_REQUIRED ? false : `${ISOLATION_MISSING}; CI sets REQUIRE_NETWORK_ISOLATION=1`
const NO_UNIX_SOCKET = 'the PostgreSQL server has no Unix socket here, and a server in its own network namespace reaches nothing else'

/** Each endpoint, how it got registered, and what its delivery must come to. */
const ENDPOINTS: ReadonlyArray<{ url: string, registeredWith: 'private networks allowed' | 'the check at add', refused: string }> = [
  { url: 'https://10.1.2.3/hooks', registeredWith: 'private networks allowed', refused: 'refused: 10.1.2.3 is in 10.0.0.0/8, Private-Use (RFC 1918)' },
  { url: 'https://169.254.169.254/latest/meta-data/', registeredWith: 'private networks allowed', refused: 'refused: 169.254.169.254 is in 169.254.0.0/16, Link Local, cloud metadata services (RFC 3927)' },
  { url: 'https://[fd00:ec2::254]/latest/meta-data/', registeredWith: 'private networks allowed', refused: 'refused: fd00:ec2::254 is in fc00::/7, Unique-Local, cloud metadata services (RFC 4193)' },
  // public when added (the check at add passed), private when delivered to
  { url: 'https://hooks.private.test/hooks', registeredWith: 'the check at add', refused: 'refused: hooks.private.test resolves to 10.1.2.3, which is in 10.0.0.0/8, Private-Use (RFC 1918)' },
  { url: 'https://hooks.metadata.test/latest/meta-data/', registeredWith: 'the check at add', refused: 'refused: hooks.metadata.test resolves to 169.254.169.254, which is in 169.254.0.0/16, Link Local, cloud metadata services (RFC 3927)' }
]

for (const store of testStores()) {
  describe(`the address check at webhook delivery (${store})`, { skip: SKIP }, () => {
    test('When an endpoint is a private, link-local or metadata address, or a name that resolves to one only by the time of delivery, then no request is made: each attempt is refused, and the delivery given up', async (t) => {
      assert.equal(ISOLATION_MISSING, undefined, `REQUIRE_NETWORK_ISOLATION=1, but this test ${ISOLATION_MISSING ?? ''}`)
      const stores = await openStores(t, store)
      const serverDatabaseUrl = store === 'sqlite' ? stores.databaseUrl : postgresOverUnixSocket(stores.databaseUrl)
      if (serverDatabaseUrl === undefined) {
        assert.ok(!NETWORK_ISOLATION_REQUIRED, `REQUIRE_NETWORK_ISOLATION=1, but ${NO_UNIX_SOCKET}`)
        t.skip(NO_UNIX_SOCKET)
        return
      }
      const ids = new Map<string, number>()
      for (const { url, registeredWith } of ENDPOINTS) {
        const env = childEnv({ DATABASE_URL: stores.databaseUrl, LOG_LEVEL: 'silent', ...dnsAnswersEnv(AT_ADD), ...(registeredWith === 'private networks allowed' ? { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } : {}) })
        const added = await runCli(['webhooks', 'add', url, '--events', 'pet.created', '--json'], env)
        assert.equal(added.code, 0, `${url}: ${added.stderr}`)
        ids.set(url, (JSON.parse(added.stdout) as { endpoint: { id: number } }).endpoint.id)
      }
      const pet = await stores.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })

      const port = await freePort()
      const server = new ServerProcess({
        entry: 'build',
        node: await isolatedNode(t),
        port,
        env: childEnv({ DATABASE_URL: serverDatabaseUrl, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', OVERLOAD_SHEDDING: 'false', WEBHOOK_RETRY_SCHEDULE: '50ms', ...dnsAnswersEnv(AT_DELIVERY) })
      })
      const kill = async (): Promise<void> => { await server.kill() }
      closeBeforeDrop(stores.databaseUrl, kill)
      t.after(kill)
      await server.waitForStdout(/"msg":"petstore ready"/)

      const stateOf = async (url: string): Promise<WebhookEndpointRecord | undefined> =>
        (await stores.webhooks.listWebhookEndpoints()).find((endpoint) => endpoint.id === ids.get(url))
      const deadline = Date.now() + 20_000
      while (!(await Promise.all(ENDPOINTS.map(async ({ url }) => (await stateOf(url))?.failed === 1))).every(Boolean)) {
        assert.ok(Date.now() < deadline, `not every delivery was given up within 20 s:\n${JSON.stringify(await stores.webhooks.listWebhookEndpoints(), null, 2)}\n${server.stdout}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }

      for (const { url, refused } of ENDPOINTS) {
        const state = await stateOf(url)
        assert.deepEqual({ lastFailure: state?.lastFailure, lastSuccessAt: state?.lastSuccessAt, waiting: state?.waiting, failed: state?.failed },
          { lastFailure: refused, lastSuccessAt: null, waiting: 0, failed: 1 }, url)
      }
      // its log, read to the end
      assert.deepEqual(await server.stop(), { code: 0, signal: null })
      for (const { url, refused } of ENDPOINTS) {
        const attempts = server.stdout.split('\n').filter((line) => line.includes(`"endpointId":${String(ids.get(url))},`) && line.includes(`"eventId":${pet.id},`))
        assert.equal(attempts.length, 2, `${url}: the first attempt and its one retry, each logged`)
        assert.ok(attempts.every((line) => line.includes(`"error":${JSON.stringify(refused)}`)), `${url}: ${attempts.join('\n')}`)
      }
      assert.doesNotMatch(server.stdout, /"msg":"webhook delivered"/)
    })
  })
}
