import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
// the package's internals, which its public API does not export: pure functions, tested on their own
import { findLink } from '../../clients/typescript/src/link-header.js'
import { isRetryableAnswer, parseRetryAfter, retryDelayMs } from '../../clients/typescript/src/retry.js'

const POLICY = { retries: 3, baseDelayMs: 200, maxDelayMs: 1_000 }

describe('the client\'s retry policy', () => {
  test('When Retry-After is seconds or an HTTP date, then it is read as milliseconds from now; anything else is ignored', () => {
    const now = Date.parse('2030-01-01T00:00:00Z')

    assert.equal(parseRetryAfter('2', now), 2_000)
    assert.equal(parseRetryAfter(' 0 ', now), 0)
    assert.equal(parseRetryAfter('Tue, 01 Jan 2030 00:00:03 GMT', now), 3_000)
    assert.equal(parseRetryAfter('Mon, 31 Dec 2029 23:59:00 GMT', now), 0)
    assert.equal(parseRetryAfter('soon', now), undefined)
    assert.equal(parseRetryAfter('-1', now), undefined)
    assert.equal(parseRetryAfter(null, now), undefined)
  })

  test('When there is no Retry-After, then the delay doubles per retry, between half and all of it, up to the cap', () => {
    assert.equal(retryDelayMs(POLICY, 1, undefined, () => 0), 100)
    assert.equal(retryDelayMs(POLICY, 1, undefined, () => 1), 200)
    assert.equal(retryDelayMs(POLICY, 3, undefined, () => 0), 400)
    assert.equal(retryDelayMs(POLICY, 3, undefined, () => 1), 800)
    assert.equal(retryDelayMs(POLICY, 10, undefined, () => 1), 1_000)
  })

  test('When there is a Retry-After, then the delay is at least that, plus at most one base delay of jitter', () => {
    assert.equal(retryDelayMs(POLICY, 1, 1_000, () => 0), 1_000)
    assert.equal(retryDelayMs(POLICY, 3, 1_000, () => 1), 1_200)
  })

  test('When an answer is an error, then only 429, 502, 503, 504 and an in-flight 409 are retried', () => {
    for (const status of [429, 502, 503, 504]) assert.equal(isRetryableAnswer(status, undefined), true, String(status))
    assert.equal(isRetryableAnswer(409, 'idempotency_request_in_progress'), true)
    for (const [status, code] of [[400, 'invalid_request'], [401, 'unauthorized'], [404, 'pet_not_found'], [409, 'conflict'], [422, 'idempotency_key_reused'], [500, 'internal_error'], [501, 'not_implemented']] as const) {
      assert.equal(isRetryableAnswer(status, code), false, `${status} ${code}`)
    }
  })
})

describe('the client\'s Link header reading', () => {
  const base = 'http://127.0.0.1:8080/v1/pets'

  test('When the header holds several links, then the one with the relation is found, resolved against the request', () => {
    const header = '<http://a.example/v1/pets?limit=2&cursor=abc>; rel="next", </v1/pets>; rel="successor-version"'

    assert.equal(findLink(header, 'next', base)?.searchParams.get('cursor'), 'abc')
    assert.equal(findLink(header, 'successor-version', base)?.href, 'http://127.0.0.1:8080/v1/pets')
    assert.equal(findLink(header, 'prev', base), undefined)
    assert.equal(findLink(null, 'next', base), undefined)
  })

  test('When rel is unquoted, in another case or one of several relations, then it still matches', () => {
    assert.equal(findLink('<p?cursor=1>; rel=next', 'next', base)?.searchParams.get('cursor'), '1')
    assert.equal(findLink('<p?cursor=2>; title="x"; rel="Next Last"', 'next', base)?.searchParams.get('cursor'), '2')
    assert.equal(findLink('<p?a=1,2&cursor=3>; rel="next"', 'next', base)?.searchParams.get('cursor'), '3')
  })
})
