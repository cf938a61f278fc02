import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, createdPet, patchPetWhileLocked, postPet, testStores, type TestApp } from '../../helpers/build-app.js'
import { assertError } from '../../helpers/assertions.js'

const APP_ORIGIN = 'https://app.example.com'
const EVIL_ORIGIN = 'https://evil.example'

/** The headers every answer of the API carries, whatever its status. */
// meant for HTML documents, not a JSON API (OWASP REST Security Cheat Sheet): not sent
const HTML_ONLY_HEADERS = ['referrer-policy', 'cross-origin-resource-policy', 'cross-origin-opener-policy', 'origin-agent-cluster',
  'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']

function assertSecurityHeaders (res: LightMyRequestResponse, cacheControl = 'no-store'): void {
  assert.equal(res.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none'")
  assert.equal(res.headers['x-content-type-options'], 'nosniff')
  assert.equal(res.headers['x-frame-options'], 'DENY')
  assert.match(String(res.headers['strict-transport-security']), /^max-age=\d+/)
  assert.equal(res.headers['cache-control'], cacheControl)
  for (const name of HTML_ONLY_HEADERS) assert.equal(res.headers[name], undefined, `${name} is for HTML documents`)
  assert.equal(res.headers['x-powered-by'], undefined)
  assert.equal(res.headers.server, undefined)
}

/** The names in a comma-separated header, lower-cased. */
function listOf (header: string | string[] | number | undefined): string[] {
  return String(header ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
}

function assertNoCorsHeaders (res: LightMyRequestResponse): void {
  const cors = Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))
  assert.deepEqual(cors, [], `unexpected CORS headers on a ${res.statusCode}`)
}

async function preflight (api: TestApp, origin: string): Promise<LightMyRequestResponse> {
  return api.app.inject({
    method: 'OPTIONS',
    url: '/v1/pets',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key'
    }
  })
}

// each case: what is asked, and the status it must get
const ANSWERS: Array<{ name: string, status: number, request: (api: TestApp) => Promise<LightMyRequestResponse> }> = [
  { name: 'a 200 (GET /v1/pets)', status: 200, request: (api) => api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth }) },
  { name: 'a 401 (no key)', status: 401, request: (api) => api.app.inject({ method: 'GET', url: '/v1/pets' }) },
  { name: 'a 404 (unknown route, with a key)', status: 404, request: (api) => api.app.inject({ method: 'GET', url: '/v1/no-such-thing', headers: api.auth }) },
  { name: 'a 400 (limit=0)', status: 400, request: (api) => api.app.inject({ method: 'GET', url: '/v1/pets?limit=0', headers: api.auth }) },
  { name: 'a 405 (DELETE /v1/pets)', status: 405, request: (api) => api.app.inject({ method: 'DELETE', url: '/v1/pets', headers: api.auth }) },
  { name: 'the liveness probe (GET /healthz)', status: 200, request: (api) => api.app.inject({ method: 'GET', url: '/healthz' }) }
]

// the answers whose content comes from the store, its failure included, on each store; CORS below is decided from the request alone
for (const store of testStores()) {
  describe(`security headers (${store})`, () => {
    for (const { name, status, request } of ANSWERS) {
      test(`When the answer is ${name}, then it carries every security header, no-store, and no server banner`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await request(api)

        assert.equal(res.statusCode, status, res.body)
        assertSecurityHeaders(res)
      })
    }

    test('When getPet answers 200, then it carries the security headers with "private, no-cache" instead of no-store', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await postPet(api, { name: 'Rex', categoryId: 3 })
      assert.equal(created.statusCode, 201, created.body)
      assertSecurityHeaders(created)

      const res = await api.app.inject({ method: 'GET', url: `/v1/pets/${String(created.json().id)}`, headers: api.auth })

      assert.equal(res.statusCode, 200, res.body)
      assertSecurityHeaders(res, 'private, no-cache')
    })

    test('When getPet answers 404, then it keeps no-store: only a representation may be revalidated', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets/999', headers: api.auth })

      assertError(res, 'pet_not_found')
      assertSecurityHeaders(res)
    })

    test('When the store fails a request (503), then the answer still carries every security header and no-store', async (t) => {
      const api = await buildTestApp(t, { store, env: { DATABASE_TIMEOUT_MS: '300' } })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      // another writer holds the pet longer than the store waits for it
      const res = await patchPetWhileLocked(api, pet.id, { status: 'sold' })

      assertError(res, 'service_unavailable')
      assertSecurityHeaders(res)
    })
  })
}

describe('CORS off (no CORS_ORIGINS)', () => {
  test('When a request carries an Origin header, then the answer allows no origin', async (t) => {
    const api = await buildTestApp(t)

    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin: APP_ORIGIN } })

    assert.equal(res.statusCode, 200, res.body)
    assertNoCorsHeaders(res)
  })

  test('When a browser sends a preflight, then it gets no CORS headers and the route answers as usual: 401 without a key', async (t) => {
    const api = await buildTestApp(t)

    const res = await preflight(api, APP_ORIGIN)

    assertError(res, 'unauthorized')
    assertNoCorsHeaders(res)
    assertSecurityHeaders(res)
  })
})

describe('CORS_ORIGINS=https://app.example.com', () => {
  const env = { CORS_ORIGINS: APP_ORIGIN }

  test('When the listed origin sends a preflight, then it gets 204 allowing that origin, the headers and POST, for 600 s', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await preflight(api, APP_ORIGIN)

    assert.equal(res.statusCode, 204, res.body)
    assert.equal(res.body, '')
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN)
    const allowedHeaders = listOf(res.headers['access-control-allow-headers'])
    for (const header of ['authorization', 'content-type', 'idempotency-key']) assert.ok(allowedHeaders.includes(header), `allow-headers lacks ${header}: ${String(res.headers['access-control-allow-headers'])}`)
    assert.ok(listOf(res.headers['access-control-allow-methods']).includes('post'), String(res.headers['access-control-allow-methods']))
    assert.equal(res.headers['access-control-max-age'], '600')
    assert.ok(listOf(res.headers.vary).includes('origin'), 'a cache must keep answers apart per Origin')
    // keys travel in Authorization, never in cookies
    assert.equal(res.headers['access-control-allow-credentials'], undefined)
  })

  test('When the listed origin sends a preflight for a conditional PATCH, then PATCH and If-Match are allowed', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({
      method: 'OPTIONS',
      url: '/v1/pets/1',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type, if-match' }
    })

    assert.equal(res.statusCode, 204, res.body)
    assert.ok(listOf(res.headers['access-control-allow-methods']).includes('patch'), String(res.headers['access-control-allow-methods']))
    assert.ok(listOf(res.headers['access-control-allow-headers']).includes('if-match'), String(res.headers['access-control-allow-headers']))
  })

  test('When the listed origin sends a preflight for a PUT (a category named from a storefront\'s back office), then PUT is allowed', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({
      method: 'OPTIONS',
      url: '/v1/categories/1',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-type' }
    })

    assert.equal(res.statusCode, 204, res.body)
    assert.ok(listOf(res.headers['access-control-allow-methods']).includes('put'), String(res.headers['access-control-allow-methods']))
  })

  test('When the listed origin sends a preflight to resume the event stream, then Last-Event-ID is allowed beside Authorization', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({
      method: 'OPTIONS',
      url: '/v1/events',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, last-event-id, x-request-id' }
    })

    assert.equal(res.statusCode, 204, res.body)
    const allowedHeaders = listOf(res.headers['access-control-allow-headers'])
    for (const header of ['authorization', 'last-event-id', 'x-request-id']) assert.ok(allowedHeaders.includes(header), `allow-headers lacks ${header}: ${String(res.headers['access-control-allow-headers'])}`)
  })

  test('When the listed origin calls the API, then the answer allows it and exposes Link, RateLimit, X-Request-Id, ETag and Location', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin: APP_ORIGIN } })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN)
    const exposed = listOf(res.headers['access-control-expose-headers'])
    for (const header of ['link', 'ratelimit', 'x-request-id', 'etag', 'location']) assert.ok(exposed.includes(header), `expose-headers lacks ${header}: ${String(res.headers['access-control-expose-headers'])}`)
    assertSecurityHeaders(res)
  })

  test('When the listed origin calls without a key, then the 401 also allows it, so the page can read the error', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { origin: APP_ORIGIN } })

    assertError(res, 'unauthorized')
    assert.equal(res.headers['access-control-allow-origin'], APP_ORIGIN)
  })

  test('When an origin that is not listed calls the API, then the answer allows no origin', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin: EVIL_ORIGIN } })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['access-control-allow-origin'], undefined)
    assert.equal(res.headers['access-control-expose-headers'], undefined)
  })

  test('When an origin that is not listed sends a preflight, then it is not a 204 and allows nothing', async (t) => {
    const api = await buildTestApp(t, { env })

    const res = await preflight(api, EVIL_ORIGIN)

    assert.notEqual(res.statusCode, 204)
    assertError(res, 'unauthorized')
    assert.equal(res.headers['access-control-allow-origin'], undefined)
    assert.equal(res.headers['access-control-allow-methods'], undefined)
    assert.equal(res.headers['access-control-allow-headers'], undefined)
  })

  test('When an origin differs from the listed one only by scheme or port, then it is not allowed', async (t) => {
    const api = await buildTestApp(t, { env })

    for (const origin of ['http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com.evil.example']) {
      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin } })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['access-control-allow-origin'], undefined, origin)
    }
  })
})

describe('CORS_ORIGINS with several origins, or *', () => {
  test('When two origins are listed, then each is allowed and echoed, not the other', async (t) => {
    const api = await buildTestApp(t, { env: { CORS_ORIGINS: `${APP_ORIGIN},https://admin.example.com` } })

    for (const origin of [APP_ORIGIN, 'https://admin.example.com']) {
      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin } })
      assert.equal(res.headers['access-control-allow-origin'], origin)
    }
    const other = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin: EVIL_ORIGIN } })
    assert.equal(other.headers['access-control-allow-origin'], undefined)
  })

  test('When CORS_ORIGINS is *, then any origin is allowed (echoed), in preflights and calls', async (t) => {
    const api = await buildTestApp(t, { env: { CORS_ORIGINS: '*' } })

    const pre = await preflight(api, EVIL_ORIGIN)
    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: { ...api.auth, origin: 'https://anyone.example:3000' } })

    assert.equal(pre.statusCode, 204, pre.body)
    assert.equal(pre.headers['access-control-allow-origin'], EVIL_ORIGIN)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['access-control-allow-origin'], 'https://anyone.example:3000')
  })

  test('When CORS_ORIGINS is * and a request has no Origin header, then no CORS header is added', async (t) => {
    const api = await buildTestApp(t, { env: { CORS_ORIGINS: '*' } })

    const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['access-control-allow-origin'], undefined)
  })
})
