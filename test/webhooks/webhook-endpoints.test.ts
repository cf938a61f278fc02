import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { checkEndpointRequest, parseEventTypes, WebhookEndpointError } from '../../src/capabilities/webhooks/webhook-endpoints.js'
import { loadConfig } from '../../src/infra/config/config.js'

const SETTINGS = loadConfig({}).webhooks
// the rules take the types the feed carries as they are given them; these four stand for them
const KNOWN = ['pet.created', 'pet.updated', 'order.created', 'order.updated'] as const

describe('webhook endpoint rules', () => {
  test('When no event types are named, then the endpoint gets every type; when some are, then those, in the document\'s order', () => {
    assert.deepEqual(parseEventTypes(undefined, KNOWN), [...KNOWN])
    assert.deepEqual(parseEventTypes(' pet.updated , pet.created,', KNOWN), ['pet.created', 'pet.updated'])
  })

  test('When an event type is unknown or the list is empty, then it is refused naming the list and the unknown type', () => {
    assert.throws(() => parseEventTypes('pet.deleted', KNOWN), (error: unknown) => {
      assert.ok(error instanceof WebhookEndpointError)
      assert.equal(error.field, 'events')
      assert.match(error.message, /^must be a comma-separated list of pet\.created, pet\.updated, order\.created, order\.updated; "pet\.deleted" is not an event type$/)
      return true
    })
    assert.throws(() => parseEventTypes(' , ', KNOWN), (error: unknown) => error instanceof WebhookEndpointError && error.field === 'events')
  })

  test('When a request is checked, then the name defaults to the URL\'s host and a name too long or blank is refused', async () => {
    const request = await checkEndpointRequest({ url: 'https://203.0.113.10/hooks' }, { ...SETTINGS, allowPrivateNetworks: true }, KNOWN)
    assert.equal(request.name, '203.0.113.10')
    assert.equal(request.url.href, 'https://203.0.113.10/hooks')

    for (const name of ['  ', 'x'.repeat(101)]) {
      await assert.rejects(checkEndpointRequest({ url: 'https://203.0.113.10/hooks', name }, { ...SETTINGS, allowPrivateNetworks: true }, KNOWN),
        (error: unknown) => error instanceof WebhookEndpointError && error.field === 'name' && /^must have 1 to 100 characters$/.test(error.message))
    }
  })

  test('When the URL is refused, then the error names the URL as the part that is wrong', async () => {
    await assert.rejects(checkEndpointRequest({ url: 'ftp://example.com/hooks' }, SETTINGS, KNOWN),
      (error: unknown) => error instanceof WebhookEndpointError && error.field === 'url')
  })
})
