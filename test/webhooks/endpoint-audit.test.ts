import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { testStores } from '../helpers/build-app.js'
import { captureLogs } from '../helpers/log-capture.js'
import { buildWebhookApi, recordPet, registered } from '../helpers/webhook-api.js'

// Every change of an endpoint through the API is audited: one log line naming the key (never a secret), and a count by action

for (const store of testStores()) {
  describe(`the audit of webhook endpoint changes (${store})`, () => {
    test('When an endpoint is created, changed, rotated, resent to, recovered and deleted, then each writes one audit line naming the key and counts once by action; reads and tests write none, and no line holds a secret', async (t) => {
      const logs = captureLogs()
      const api = await buildWebhookApi(t, { store, logStream: logs.stream, env: { LOG_LEVEL: 'info', WEBHOOK_TIMEOUT_MS: '200' } })
      const before = await api.app.metrics.registry.getSingleMetricAsString('petstore_webhook_endpoint_changes_total')
      const eventId = await recordPet(api, 'Rex')

      const created = await registered(api, { url: 'https://93.184.215.14/hooks?token=s3cr3t', events: ['pet.created'] })
      const { id } = created
      await api.call('GET', `/v1/webhook-endpoints/${id}`)
      await api.call('GET', '/v1/webhook-endpoints')
      await api.call('POST', `/v1/webhook-endpoints/${id}/test`)
      await api.call('GET', `/v1/webhook-endpoints/${id}/attempts`)
      await api.call('PATCH', `/v1/webhook-endpoints/${id}`, { name: 'storefront', rateLimit: 3 })
      await api.call('PATCH', `/v1/webhook-endpoints/${id}`, {})
      const rotated = (await api.call('POST', `/v1/webhook-endpoints/${id}/rotate-secret`)).json()
      await api.call('POST', `/v1/webhook-endpoints/${id}/resend`, { eventId })
      await api.call('POST', `/v1/webhook-endpoints/${id}/recover`, { since: new Date(Date.now() - 60_000).toISOString() })
      await api.call('DELETE', `/v1/webhook-endpoints/${id}`)
      const after = await api.app.metrics.registry.getSingleMetricAsString('petstore_webhook_endpoint_changes_total')

      const audited = logs.records().filter((record) => record.audit === 'webhook_endpoint')
      assert.deepEqual(audited.map((record) => record.action), ['created', 'updated', 'secret_rotated', 'resent', 'recovered', 'deleted'])
      for (const record of audited) {
        assert.deepEqual(record.apiKey, { name: 'integrator', role: 'admin', id: record.apiKey === null ? null : (record.apiKey as { id: number }).id })
        assert.equal(record.endpointId, id)
        assert.match(String(record.msg), new RegExp(`^webhook endpoint ${id} [a-z ]+ by key "integrator" \\(admin, id \\d+\\)$`))
      }
      assert.equal(audited[0]?.url, 'https://93.184.215.14/hooks', 'the URL is logged without its query')
      assert.deepEqual((({ fields, name, rateLimit }) => ({ fields, name, rateLimit }))(audited[1] ?? {}), { fields: ['name', 'rateLimit'], name: 'storefront', rateLimit: 3 })
      assert.equal(audited[3]?.eventId, eventId)
      const everything = logs.lines.join('\n')
      for (const secret of [String(created.secret), String(rotated.secret), 's3cr3t']) assert.ok(!everything.includes(secret), 'a secret in the log')
      assert.doesNotMatch(everything, /whsec_|whsk_/)
      for (const action of ['created', 'updated', 'secret_rotated', 'resent', 'recovered', 'deleted']) {
        assert.match(before, new RegExp(`^petstore_webhook_endpoint_changes_total\\{action="${action}"\\} 0$`, 'm'), `the ${action} series at 0 from the start`)
        assert.match(after, new RegExp(`^petstore_webhook_endpoint_changes_total\\{action="${action}"\\} 1$`, 'm'))
      }
    })
  })
}
