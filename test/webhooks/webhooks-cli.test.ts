import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { loadConfig } from '../../src/infra/config/config.js'
import { describeDatabase } from '../../src/infra/database/open-database.js'
import { freshDatabaseUrl, testStores, type StoreKind } from '../helpers/databases.js'
import { childEnv, runCli, type CliResult } from '../helpers/processes.js'

const SECRET = /whsec_[A-Za-z0-9+/]{43}=/g

interface Cli {
  database: string
  run (...args: string[]): Promise<CliResult>
}

async function cliOnFreshDatabase (t: TestContext, store: StoreKind, env: Record<string, string> = {}): Promise<Cli> {
  const databaseUrl = await freshDatabaseUrl(t, store)
  const database = describeDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database)
  const processEnv = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env })
  return { database, run: async (...args) => await runCli(args, processEnv) }
}

async function listJson (cli: Cli): Promise<Array<Record<string, unknown>>> {
  const listed = await cli.run('webhooks', 'list', '--json')
  assert.equal(listed.code, 0, listed.stderr)
  const document = JSON.parse(listed.stdout) as { database: string, endpoints: Array<Record<string, unknown>> }
  assert.equal(document.database, cli.database)
  return document.endpoints
}

for (const store of testStores()) {
  describe(`npx petstore webhooks (${store})`, () => {
    test('When an endpoint is added, listed, rotated and removed, then each command names the database, and a secret is printed once each time and never listed', async (t) => {
      const cli = await cliOnFreshDatabase(t, store, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })
      // a public address literal: nothing is resolved, nothing is sent
      const added = await cli.run('webhooks', 'add', 'https://93.184.215.14/hooks', '--events', 'pet.updated', '--name', 'mailer')
      assert.equal(added.code, 0, added.stderr)
      assert.ok(added.stdout.includes(cli.database))
      const [secret, ...more] = added.stdout.match(SECRET) ?? []
      assert.ok(secret !== undefined && more.length === 0, added.stdout)
      assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32)
      const id = Number(/endpoint (\d+)/.exec(added.stdout)?.[1])

      const [endpoint] = await listJson(cli)
      assert.deepEqual({ ...endpoint, createdAt: undefined }, {
        id,
        name: 'mailer',
        url: 'https://93.184.215.14/hooks',
        eventTypes: ['pet.updated'],
        description: null,
        rateLimit: null,
        signing: 'hmac-sha256',
        publicKey: null,
        createdAt: undefined,
        disabledAt: null,
        waiting: 0,
        failed: 0,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastFailure: null
      })
      const table = await cli.run('webhooks', 'list')
      assert.equal(table.code, 0)
      assert.ok(table.stdout.includes(cli.database) && table.stdout.includes('https://93.184.215.14/hooks'))
      assert.doesNotMatch(table.stdout + JSON.stringify(endpoint), /whsec_/)

      const rotated = await cli.run('webhooks', 'rotate-secret', String(id))
      assert.equal(rotated.code, 0, rotated.stderr)
      const [newSecret] = rotated.stdout.match(SECRET) ?? []
      assert.ok(newSecret !== undefined && newSecret !== secret)
      assert.match(rotated.stdout, /old and the new secret/)

      const again = await cli.run('webhooks', 'add', 'https://93.184.215.14/hooks')
      assert.equal(again.code, 2, 'the same URL twice is refused')
      assert.match(again.stderr, new RegExp(`already registered .* as endpoint ${id}`))

      const removed = await cli.run('webhooks', 'remove', String(id))
      assert.equal(removed.code, 0, removed.stderr)
      assert.ok(removed.stdout.includes(cli.database))
      assert.deepEqual(await listJson(cli), [])
      const gone = await cli.run('webhooks', 'remove', String(id))
      assert.equal(gone.code, 1)
      assert.match(gone.stderr, new RegExp(`no webhook endpoint has id ${id} in`))
    })

    test('When add is given a bad URL, a private host, an unknown event type or stray arguments, then it says what is wrong, exits 2 and registers nothing', async (t) => {
      const cli = await cliOnFreshDatabase(t, store)
      const cases: Array<[string[], RegExp]> = [
        [['webhooks', 'add', 'http://93.184.215.14/hooks'], /must be https:.*WEBHOOK_ALLOW_HTTP=true/],
        [['webhooks', 'add', 'https://127.0.0.1/hooks'], /127\.0\.0\.1 is in 127\.0\.0\.0\/8, Loopback .*WEBHOOK_ALLOWED_NETWORKS/],
        [['webhooks', 'add', 'https://localhost:8443/hooks'], /localhost resolves to .*Loopback.*WEBHOOK_ALLOWED_NETWORKS/],
        [['webhooks', 'add', 'https://[::127.0.0.1]/hooks'], /IPv4-compatible/],
        [['webhooks', 'add', 'https://[2002:7f00:1::]/hooks'], /6to4/],
        [['webhooks', 'add', 'https://192.0.2.10/hooks'], /Documentation, TEST-NET-1/],
        [['webhooks', 'add', 'https://198.18.0.1/hooks'], /Benchmarking/],
        [['webhooks', 'add', 'https://169.254.169.254/latest/meta-data'], /169\.254\.169\.254/],
        [['webhooks', 'add', 'https://[::1]/hooks'], /::1/],
        [['webhooks', 'add', 'https://[fd00:ec2::254]/hooks'], /fd00:ec2::254/],
        [['webhooks', 'add', 'https://10.1.2.3/hooks'], /10\.1\.2\.3/],
        [['webhooks', 'add', 'https://user:pass@93.184.215.14/hooks'], /must not carry credentials/],
        [['webhooks', 'add', 'not a url'], /is not an absolute URL/],
        [['webhooks', 'add', 'https://93.184.215.14/hooks', '--events', 'pet.deleted'], /"pet\.deleted" is not an event type/],
        [['webhooks', 'add'], /needs one URL/],
        [['webhooks', 'add', 'https://93.184.215.14/a', 'https://93.184.215.14/b'], /needs one URL/],
        [['webhooks', 'remove', 'abc'], /needs the numeric id/],
        [['webhooks', 'rotate-secret'], /needs the numeric id/],
        [['webhooks', 'update', '--name', 'shop'], /webhooks update needs the numeric id/],
        [['webhooks', 'disable'], /webhooks disable needs the numeric id/],
        [['webhooks', 'frobnicate'], /unknown webhooks action "frobnicate"; the actions are add, list, update, remove, rotate-secret, disable, enable, test, deliveries, retry, resend or recover/],
        [['webhooks', 'test'], /webhooks test needs the numeric id/],
        [['webhooks', 'test', '1', '2'], /webhooks test needs the numeric id/],
        [['webhooks', 'deliveries', '0'], /webhooks deliveries needs the numeric id/],
        [['webhooks', 'deliveries', '1', '--limit', '0'], /--limit must be an integer from 1 to 1000, got "0"/],
        [['webhooks', 'deliveries', '1', '--limit', '1001'], /--limit must be an integer from 1 to 1000, got "1001"/],
        [['webhooks', 'deliveries', '1', '--limit', '5x'], /--limit must be an integer from 1 to 1000, got "5x"/],
        [['webhooks', 'deliveries', '1', '--limit'], /Option '--limit <value>' argument missing/],
        [['webhooks', 'deliveries', '1', '--failed=yes'], /Option '--failed' does not take an argument/],
        [['webhooks', 'retry', '-1'], /webhooks retry needs the numeric id|Unknown option '-1'/],
        [['webhooks', 'retry', '1', '--all'], /Unknown option '--all'/],
        [['webhooks', 'add', 'https://93.184.215.14/hooks', '--colour', 'red'], /Unknown option '--colour'/]
      ]
      for (const [args, message] of cases) {
        const result = await cli.run(...args)
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`)
        assert.match(result.stderr, message, args.join(' '))
        assert.doesNotMatch(result.stdout, /whsec_/)
      }
      assert.deepEqual(await listJson(cli), [])
    })

    test('When WEBHOOK_ALLOWED_NETWORKS names a network, then add accepts an address in it and still refuses one just outside it', async (t) => {
      const cli = await cliOnFreshDatabase(t, store, { WEBHOOK_ALLOWED_NETWORKS: '192.0.2.0/25' })
      const inside = await cli.run('webhooks', 'add', 'https://192.0.2.10/hooks', '--json')
      const outside = await cli.run('webhooks', 'add', 'https://192.0.2.200/hooks')

      assert.equal(inside.code, 0, inside.stderr)
      assert.equal(outside.code, 2, outside.stdout)
      assert.match(outside.stderr, /192\.0\.2\.200 is in 192\.0\.2\.0\/24, Documentation/)
      assert.deepEqual((await listJson(cli)).map((endpoint) => endpoint.url), ['https://192.0.2.10/hooks'])
    })

    test('When add accepts a URL only because WEBHOOK_ALLOW_* in its own environment allows it, then it reminds that every server instance needs the same settings; a public https: URL gets no reminder', async (t) => {
      const cli = await cliOnFreshDatabase(t, store, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '192.0.2.0/25' })
      const open = await cliOnFreshDatabase(t, store, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })

      const insideOverHttp = await cli.run('webhooks', 'add', 'http://192.0.2.10/hooks')
      const publicOverHttp = await cli.run('webhooks', 'add', 'http://93.184.215.14/hooks', '--json')
      const publicOverHttps = await cli.run('webhooks', 'add', 'https://93.184.215.14/hooks')
      const privateAddress = await open.run('webhooks', 'add', 'https://10.1.2.3/hooks', '--json')

      for (const result of [insideOverHttp, publicOverHttp, publicOverHttps, privateAddress]) assert.equal(result.code, 0, result.stderr)
      const reminder = (settings: string, id: number): RegExp => new RegExp(`^petstore: note: \\S+ is accepted because this command's environment sets ${settings}; ` +
        `every server instance needs the same, or it refuses each delivery to endpoint ${id} \\("refused: …" in webhooks deliveries ${id}\\)\\.$`, 'm')
      assert.match(insideOverHttp.stderr, reminder('WEBHOOK_ALLOW_HTTP=true and WEBHOOK_ALLOWED_NETWORKS=192\\.0\\.2\\.0/25', 1))
      assert.match(publicOverHttp.stderr, reminder('WEBHOOK_ALLOW_HTTP=true', 2))
      assert.equal(JSON.parse(publicOverHttp.stdout).endpoint.id, 2, 'with --json the document stays whole on stdout')
      assert.equal(publicOverHttps.stderr, '', 'a public https: URL needs nothing of the server')
      assert.match(privateAddress.stderr, reminder('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', 1))
    })

    test('When a command names an endpoint that does not exist, then it says so, naming the database, exits 1 and changes nothing', async (t) => {
      const cli = await cliOnFreshDatabase(t, store)
      for (const args of [['remove', '7'], ['rotate-secret', '7'], ['update', '7', '--name', 'shop'], ['disable', '7'], ['enable', '7'], ['test', '7'], ['deliveries', '7'], ['deliveries', '7', '--failed', '--limit', '3', '--json'], ['retry', '7', '--json']]) {
        const result = await cli.run('webhooks', ...args)
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}${result.stderr}`)
        assert.equal(result.stderr.trim(), `petstore: no webhook endpoint has id 7 in ${cli.database}`, args.join(' '))
        assert.equal(result.stdout, '', args.join(' '))
      }
      assert.deepEqual(await listJson(cli), [])
    })

    test('When remove and enable are asked for --json, then they print one JSON document naming the database', async (t) => {
      const cli = await cliOnFreshDatabase(t, store)
      const added = await cli.run('webhooks', 'add', 'https://93.184.215.14/hooks', '--json')
      const { endpoint: { id } } = JSON.parse(added.stdout) as { endpoint: { id: number } }

      const enabled = await cli.run('webhooks', 'enable', String(id), '--json')
      const removed = await cli.run('webhooks', 'remove', String(id), '--json')

      assert.deepEqual(JSON.parse(enabled.stdout), { database: cli.database, id, enabled: true, changed: false })
      assert.deepEqual(JSON.parse(removed.stdout), { database: cli.database, id, removed: true })
    })

    test('When update is given an unknown event type, an empty name or nothing to change, then it names the problem, exits 2 and the endpoint is unchanged; the same values again change nothing and say so', async (t) => {
      const cli = await cliOnFreshDatabase(t, store)
      const added = await cli.run('webhooks', 'add', 'https://93.184.215.14/hooks', '--events', 'pet.updated', '--name', 'mailer', '--json')
      const { endpoint: { id } } = JSON.parse(added.stdout) as { endpoint: { id: number } }
      const before = await listJson(cli)
      const cases: Array<[string[], RegExp]> = [
        [['--events', 'pet.created,pet.deleted'], /^petstore: webhooks update: --events must be a comma-separated list of .*; "pet\.deleted" is not an event type$/m],
        [['--events', ''], /^petstore: webhooks update: --events must be a comma-separated list of /m],
        [['--name', '  '], /^petstore: webhooks update: --name must have 1 to 100 characters$/m],
        [['--name', 'x'.repeat(101)], /^petstore: webhooks update: --name must have 1 to 100 characters$/m],
        [[], /^petstore: webhooks update: nothing to change: give --events, --name, --url, --description or --rate-limit$/m],
        [['--json'], /nothing to change/]
      ]
      for (const [options, message] of cases) {
        const result = await cli.run('webhooks', 'update', String(id), ...options)
        assert.equal(result.code, 2, `${options.join(' ')}: ${result.stdout}${result.stderr}`)
        assert.match(result.stderr, message, options.join(' '))
        assert.equal(result.stdout, '')
      }
      assert.deepEqual(await listJson(cli), before, 'a refused update changed the endpoint')

      const same = await cli.run('webhooks', 'update', String(id), '--events', 'pet.updated', '--name', ' mailer ')
      const changed = await cli.run('webhooks', 'update', String(id), '--events', 'pet.updated,pet.created', '--json')

      assert.equal(same.code, 0, same.stderr)
      assert.match(same.stdout, new RegExp(`^Webhook endpoint ${id} in .* already has those settings; nothing to do\\.$`, 'm'))
      assert.equal(changed.code, 0, changed.stderr)
      const document = JSON.parse(changed.stdout) as { database: string, id: number, changed: boolean, endpoint: Record<string, unknown> }
      assert.deepEqual({ database: document.database, id: document.id, changed: document.changed, eventTypes: document.endpoint.eventTypes, name: document.endpoint.name },
        { database: cli.database, id, changed: true, eventTypes: ['pet.created', 'pet.updated'], name: 'mailer' })
      assert.doesNotMatch(changed.stdout, /whsec_/)
    })

    test('When --help is asked of any webhooks command, then it prints that command\'s usage and exits 0', async (t) => {
      const cli = await cliOnFreshDatabase(t, store)
      for (const action of ['add', 'list', 'update', 'remove', 'rotate-secret', 'disable', 'enable', 'test', 'deliveries', 'retry']) {
        const result = await cli.run('webhooks', action, '--help')
        assert.equal(result.code, 0, result.stderr)
        assert.match(result.stdout, new RegExp(`^Usage: petstore webhooks ${action}`))
      }
    })
  })
}
