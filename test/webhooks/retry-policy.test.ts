import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decideRetry, jittered, RETRY_AFTER_CAP_MS, RETRY_JITTER, retryAfterMs } from '../../src/capabilities/webhooks/retry-policy.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const SCHEDULE = [5_000, 300_000]

describe('webhook retry policy', () => {
  test('When a receiver sends Retry-After, then seconds and HTTP dates are read, capped, and nonsense ignored', () => {
    assert.equal(retryAfterMs('120', NOW), 120_000)
    assert.equal(retryAfterMs(' 0 ', NOW), 0)
    assert.equal(retryAfterMs(new Date(NOW + 90_000).toUTCString(), NOW), 90_000)
    assert.equal(retryAfterMs(new Date(NOW - 90_000).toUTCString(), NOW), 0, 'a date in the past: at once')
    assert.equal(retryAfterMs('999999', NOW), RETRY_AFTER_CAP_MS, 'a receiver cannot park a delivery for days')
    assert.equal(retryAfterMs('soon', NOW), undefined)
    assert.equal(retryAfterMs('-5', NOW), undefined)
    assert.equal(retryAfterMs(undefined, NOW), undefined)
  })

  test('When a delay is jittered, then it strays symmetrically, at most RETRY_JITTER either side', () => {
    assert.equal(jittered(10_000, 0), 10_000 * (1 - RETRY_JITTER))
    assert.equal(jittered(10_000, 0.5), 10_000)
    assert.ok(jittered(10_000, 0.999_999) <= 10_000 * (1 + RETRY_JITTER))
    assert.ok(jittered(10_000, 0.999_999) > 10_000 * (1 + RETRY_JITTER) - 1)
  })

  test('When an attempt fails, then the schedule decides, a longer Retry-After wins, and the schedule\'s end gives up', () => {
    assert.deepEqual(decideRetry({ status: 500 }, 1, SCHEDULE, NOW, 0.5), { retryAt: NOW + 5_000, endpointWaitsUntil: undefined, disable: false })
    assert.equal(decideRetry({ status: 500, retryAfter: '60' }, 1, SCHEDULE, NOW, 0.5).retryAt, NOW + 60_000, 'never sooner than asked')
    assert.equal(decideRetry({ status: 500, retryAfter: '1' }, 2, SCHEDULE, NOW, 0.5).retryAt, NOW + 300_000, 'never sooner than the schedule')
    assert.equal(decideRetry({ status: 500 }, 3, SCHEDULE, NOW, 0.5).retryAt, undefined)
    assert.equal(decideRetry({}, 1, SCHEDULE, NOW, 0.5).endpointWaitsUntil, undefined, 'an error without an answer throttles nothing')
  })

  test('When a receiver answers 429, 502, 503 or 504, then the whole endpoint waits (as long as it asked, or the delay)', () => {
    for (const status of [429, 502, 503, 504]) {
      assert.equal(decideRetry({ status }, 1, SCHEDULE, NOW, 0.5).endpointWaitsUntil, NOW + 5_000, `status ${status}`)
      assert.equal(decideRetry({ status, retryAfter: '30' }, 1, SCHEDULE, NOW, 0.5).endpointWaitsUntil, NOW + 30_000, `status ${status} with Retry-After`)
    }
    assert.equal(decideRetry({ status: 500 }, 1, SCHEDULE, NOW, 0.5).endpointWaitsUntil, undefined)
  })

  test('When a receiver answers 410 Gone, then the endpoint is disabled', () => {
    assert.equal(decideRetry({ status: 410 }, 1, SCHEDULE, NOW, 0.5).disable, true)
    assert.equal(decideRetry({ status: 404 }, 1, SCHEDULE, NOW, 0.5).disable, false)
  })
})
