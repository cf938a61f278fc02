import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createdPet, testStores } from '../helpers/build-app.js'
import { childEnv, runCli, type CliResult } from '../helpers/processes.js'
import { eventually } from '../helpers/webhook-endpoints.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'
import { buildWebhookApi, type WebhookApi } from '../helpers/webhook-api.js'

// The CLI's new settings and its resend and recover: processes of `petstore webhooks …` on the database a running
// app (in this process) delivers from, with the same rules as the API (webhook-endpoints.ts)

const RECEIVER_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'silent' }

function cliOf (api: WebhookApi): (...args: string[]) => Promise<CliResult> {
  const env = childEnv({ DATABASE_URL: api.databaseUrl, ...RECEIVER_ENV })
  return async (...args) => await runCli(args, env)
}

for (const store of testStores()) {
  describe(`npx petstore webhooks: settings, resend and recover (${store})`, () => {
    test('When an endpoint is added with --signing ed25519, --rate-limit and --description, then the CLI prints its public key and no secret, and update changes the URL, the limit and the description; bad values are refused naming the flag', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const cli = cliOf(api)

      const added = await cli('webhooks', 'add', 'https://93.184.215.14/hooks', '--signing', 'ed25519', '--rate-limit', '3', '--description', 'storefront', '--json')
      const { endpoint, publicKey, secret } = JSON.parse(added.stdout)
      const updated = await cli('webhooks', 'update', String(endpoint.id), '--url', 'https://93.184.215.14/other', '--rate-limit', 'none', '--description', '', '--json')
      const refused = await Promise.all([
        cli('webhooks', 'add', 'https://93.184.215.14/x', '--rate-limit', '0'),
        cli('webhooks', 'add', 'https://93.184.215.14/x', '--rate-limit', '1001'),
        cli('webhooks', 'add', 'https://93.184.215.14/x', '--signing', 'rsa'),
        cli('webhooks', 'update', String(endpoint.id), '--url', 'ftp://93.184.215.14/x'),
        cli('webhooks', 'update', String(endpoint.id), '--rate-limit', 'fast')
      ])

      assert.equal(added.code, 0, added.stderr)
      assert.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/)
      assert.equal(secret, undefined)
      assert.deepEqual([endpoint.signing, endpoint.rateLimit, endpoint.description, endpoint.publicKey], ['ed25519', 3, 'storefront', publicKey])
      assert.equal(updated.code, 0, updated.stderr)
      assert.deepEqual((({ url, rateLimit, description }) => ({ url, rateLimit, description }))(JSON.parse(updated.stdout).endpoint),
        { url: 'https://93.184.215.14/other', rateLimit: null, description: null })
      assert.deepEqual(refused.map(({ code }) => code), [2, 2, 2, 2, 2])
      assert.match(refused[0]?.stderr ?? '', /^petstore: webhooks add: --rate-limit must be a whole number of deliveries per second from 1 to 1000$/m)
      assert.match(refused[1]?.stderr ?? '', /--rate-limit must be a whole number/)
      assert.match(refused[2]?.stderr ?? '', /^petstore: webhooks add: --signing must be hmac-sha256 or ed25519$/m)
      assert.match(refused[3]?.stderr ?? '', /^petstore: webhooks update: the URL must be https:/m)
      assert.match(refused[4]?.stderr ?? '', /^petstore: webhooks update: --rate-limit must be a whole number/m)
      assert.equal((await api.app.webhookStore.listWebhookEndpoints()).length, 1)
    })

    test('When `webhooks resend` and `webhooks recover` are run, then the event is sent again and the failed ones are put back in line and sent; a disabled endpoint is refused, a bad --since is a usage error', async (t) => {
      const api = await buildWebhookApi(t, { store, env: { WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } })
      const cli = cliOf(api)
      const receiver = await webhookReceiver(t)
      // answered by pet, not by arrival: the two retries come due 100 ms ± 20 % after their failures, so either may be sent
      // first. A fails both its attempts (given up after one retry) and is delivered from its third; B fails its first only
      const attemptsOf = new Map<string, number>()
      receiver.answer((request) => {
        const name = String(JSON.parse(request.body).data.pet.name)
        const attempt = (attemptsOf.get(name) ?? 0) + 1
        attemptsOf.set(name, attempt)
        return attempt <= (name === 'A' ? 2 : 1) ? 500 : 204
      })
      const added = JSON.parse((await cli('webhooks', 'add', receiver.url, '--events', 'pet.created', '--json')).stdout)
      const id = String(added.endpoint.id)
      const since = new Date(Date.now() - 60_000).toISOString()
      await createdPet(api, { name: 'A', categoryId: 1 })
      await createdPet(api, { name: 'B', categoryId: 1 })
      await eventually(async () => (await api.app.webhookStore.findWebhookEndpoint(Number(id)))?.failed === 1 && receiver.received.length >= 4, 'A given up, B delivered')
      const [a, b] = (await api.app.eventStore.listEvents({ afterId: 0, limit: 10 })).events.map((event) => String(event.id))

      const recovered = await cli('webhooks', 'recover', id, '--since', since, '--json')
      await eventually(async () => receiver.received.filter((request) => request.headers['webhook-id'] === a).length === 3, 'A sent again')
      const resent = await cli('webhooks', 'resend', id, String(b))
      await eventually(async () => receiver.received.filter((request) => request.headers['webhook-id'] === b).length === 3, 'B sent again')
      await cli('webhooks', 'disable', id)
      const refusedResend = await cli('webhooks', 'resend', id, String(b))
      const refusedRecover = await cli('webhooks', 'recover', id, '--since', since)
      const badSince = await cli('webhooks', 'recover', id, '--since', 'yesterday')
      const noSince = await cli('webhooks', 'recover', id)

      assert.equal(recovered.code, 0, recovered.stderr)
      assert.deepEqual((({ queued, firstEventId, lastEventId }) => ({ queued, firstEventId, lastEventId }))(JSON.parse(recovered.stdout)),
        { queued: 1, firstEventId: Number(a), lastEventId: Number(a) }, 'B was delivered since its failure: only A is recovered')
      assert.equal(resent.code, 0, resent.stderr)
      assert.match(resent.stdout, new RegExp(`^Put event ${b} back in line for webhook endpoint ${id} in .* \\(its attempt 3\\); running instances send it now\\.$`, 'm'))
      assert.deepEqual([refusedResend.code, refusedRecover.code], [1, 1])
      assert.match(refusedResend.stderr, new RegExp(`webhook endpoint ${id} in .* is disabled: \`webhooks enable ${id}\` first`))
      assert.equal(badSince.code, 2)
      assert.match(badSince.stderr, /^petstore: webhooks recover: --since must be an RFC 3339 date-time such as 2026-11-28T09:00:00Z, got "yesterday"$/m)
      assert.equal(noSince.code, 2)
      assert.match(noSince.stderr, /webhooks recover needs --since <date-time>/)
    })
  })
}
