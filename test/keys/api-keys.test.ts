import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, test } from 'node:test'
import { API_KEY_PREFIX, digestApiKey, findDigestInConstantTime, generateApiKey, hashApiKey, parseBearer } from '../../src/capabilities/keys/api-keys.js'

describe('API keys', () => {
  test('When keys are generated, then each carries 256 random bits and they differ', () => {
    const keys = Array.from({ length: 1000 }, generateApiKey)

    assert.equal(new Set(keys).size, keys.length)
    for (const key of keys) {
      assert.ok(key.startsWith(API_KEY_PREFIX))
      assert.equal(Buffer.from(key.slice(API_KEY_PREFIX.length), 'base64url').length, 32)
    }
  })

  test('When a key is hashed, then the hash is its SHA-256 in hex', () => {
    assert.equal(hashApiKey('abc'), createHash('sha256').update('abc').digest('hex'))
  })

  test('When a key is digested, then the digest is the bytes of its hash', () => {
    assert.equal(digestApiKey('abc').toString('hex'), hashApiKey('abc'))
  })

  test('When digests are compared, then only the entry with an equal digest is found', () => {
    const entries = ['a', 'b'].map((key) => ({ key, digest: digestApiKey(key) }))

    assert.equal(findDigestInConstantTime(entries, digestApiKey('b'))?.key, 'b')
    assert.equal(findDigestInConstantTime(entries, digestApiKey('c')), undefined)
    assert.equal(findDigestInConstantTime([], digestApiKey('c')), undefined)
  })

  test('When an Authorization header is parsed, then only "Bearer <b64token>" yields a token', () => {
    assert.deepEqual(parseBearer('Bearer abc.DEF-_~+/=='), { ok: true, token: 'abc.DEF-_~+/==' })
    assert.deepEqual(parseBearer('bearer   abc'), { ok: true, token: 'abc' })
    assert.deepEqual(parseBearer(undefined), { ok: false, reason: 'missing' })
    assert.deepEqual(parseBearer('  '), { ok: false, reason: 'missing' })
    for (const header of ['Bearer', 'Bearer ', 'Basic abc', 'Bearerabc', 'Bearer a b', 'Bearer a=b', 'Token abc']) {
      assert.deepEqual(parseBearer(header), { ok: false, reason: 'malformed' }, header)
    }
  })
})
