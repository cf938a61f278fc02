import assert from 'node:assert/strict'
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { describe, test } from 'node:test'
import { testStores } from '../helpers/build-app.js'
import { webhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js'
import { buildWebhookApi, recordPet, registered } from '../helpers/webhook-api.js'

// Standard Webhooks' asymmetric scheme (v1a, ed25519), verified here as a receiver would: node:crypto's own
// ed25519, from the public key the API answered, never through the service's signing code

/** The ed25519 public key of a `whpk_…` (its 32 raw bytes, base64). */
function publicKeyOf (whpk: string): KeyObject {
  assert.match(whpk, /^whpk_[A-Za-z0-9+/]{43}=$/)
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(whpk.slice('whpk_'.length), 'base64').toString('base64url') }, format: 'jwk' })
}

/** The `v1a` signatures of a request that `key` verifies over `id.timestamp.body`. */
function verifiedBy (key: KeyObject, request: ReceivedWebhook, body = request.body): number {
  const content = Buffer.from(`${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${body}`)
  return String(request.headers['webhook-signature']).split(' ')
    .filter((signature) => signature.startsWith('v1a,'))
    .filter((signature) => verify(null, content, key, Buffer.from(signature.slice('v1a,'.length), 'base64'))).length
}

for (const store of testStores()) {
  describe(`ed25519 signatures (${store})`, () => {
    test('When an endpoint signs with ed25519, then registering it answers a whpk_ public key and no secret, and each delivery carries a v1a signature that key verifies and a changed body does not', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const receiver = await webhookReceiver(t)

      const created = await registered(api, { url: receiver.url, events: ['pet.created'], signing: 'ed25519' })
      await recordPet(api, 'Rex')
      const [request] = await receiver.waitFor(1)
      assert.ok(request !== undefined)
      const key = publicKeyOf(String(created.publicKey))

      assert.equal(created.secret, undefined)
      assert.equal(created.signing, 'ed25519')
      assert.match(String(request.headers['webhook-signature']), /^v1a,[A-Za-z0-9+/]{86}==$/)
      assert.equal(verifiedBy(key, request), 1)
      assert.equal(verifiedBy(key, request, request.body.replace('Rex', 'Rox')), 0, 'a changed body still verifies')
      assert.equal((await api.call('GET', `/v1/webhook-endpoints/${created.id}`)).json().publicKey, created.publicKey, 'the public key is shown whenever the endpoint is read')
    })

    test('When an ed25519 endpoint\'s keys are rotated, then the answer is the new public key and, during the overlap, each request carries signatures that the old and the new key each verify; a test message is signed so too', async (t) => {
      const api = await buildWebhookApi(t, { store })
      const receiver = await webhookReceiver(t)
      const created = await registered(api, { url: receiver.url, events: ['pet.created'], signing: 'ed25519' })

      const rotated = await api.call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`)
      await recordPet(api, 'Rex')
      const tested = await api.call('POST', `/v1/webhook-endpoints/${created.id}/test`)
      const requests = await receiver.waitFor(2)

      assert.equal(rotated.statusCode, 200, rotated.body)
      assert.deepEqual(Object.keys(rotated.json()).sort(), ['previousSecretValidUntil', 'publicKey'])
      assert.notEqual(rotated.json().publicKey, created.publicKey)
      assert.equal(tested.json().delivered, true)
      for (const request of requests) {
        assert.equal(verifiedBy(publicKeyOf(String(created.publicKey)), request), 1, `the old key: ${String(request.headers['webhook-id'])}`)
        assert.equal(verifiedBy(publicKeyOf(rotated.json().publicKey), request), 1, `the new key: ${String(request.headers['webhook-id'])}`)
      }
    })
  })
}
