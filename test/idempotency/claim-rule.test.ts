import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decideClaim, type IdempotencyClaimRequest, type IdempotencyRow } from '../../src/capabilities/idempotency/claims.js'

const NOW = 1_000_000
const REQUEST: IdempotencyClaimRequest = { scope: 's', key: 'k', fingerprint: 'f', token: 't2', now: new Date(NOW), leaseMs: 60_000, ttlMs: 86_400_000 }
const COMPLETED: IdempotencyRow = { fingerprint: 'f', token: null, lockedUntilMs: null, responseStatus: 201, responseBody: '{"id":1}', expiresAtMs: NOW + 1 }

describe('the Idempotency-Key claim rule', () => {
  test('When a record exists, then a completed one with the same body is replayed, another body is a mismatch, a held claim is in flight', () => {
    assert.deepEqual(decideClaim(COMPLETED, REQUEST), { action: 'answer', claim: { outcome: 'completed', response: { status: 201, body: '{"id":1}' } } })
    assert.deepEqual(decideClaim({ ...COMPLETED, fingerprint: 'other' }, REQUEST), { action: 'answer', claim: { outcome: 'mismatch' } })
    assert.deepEqual(decideClaim({ ...COMPLETED, token: 't1', lockedUntilMs: NOW + 1, responseStatus: null, responseBody: null }, REQUEST),
      { action: 'answer', claim: { outcome: 'in_flight' } })
  })

  test('When a record expired, or its claim was abandoned (whatever its body), then it is taken over', () => {
    assert.deepEqual(decideClaim({ ...COMPLETED, expiresAtMs: NOW }, REQUEST), { action: 'take_over' })
    assert.deepEqual(decideClaim({ ...COMPLETED, fingerprint: 'other', token: 't1', lockedUntilMs: NOW, responseStatus: null, responseBody: null }, REQUEST), { action: 'take_over' })
  })
})
