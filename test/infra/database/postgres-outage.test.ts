import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { generateApiKey } from '../../../src/capabilities/keys/api-keys.js'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, postPet, type TestApp } from '../../helpers/build-app.js'
import { freshDatabaseUrl, requiresPostgres } from '../../helpers/databases.js'
import { startTcpProxy, type CutMode, type TcpProxy } from '../../helpers/tcp-proxy.js'

// short, so that a whole outage plays out in a few seconds
const TIMEOUT_MS = 500
// a store call waits at most TIMEOUT_MS for a connection, then at most TIMEOUT_MS for its query;
// the slack covers the event loop and inject, not another timeout
const BOUND_MS = 2 * TIMEOUT_MS + 250
// a request still unanswered by then hangs: fail on it rather than wait for the test's timeout
const HANG_MS = 5000
// how long the app may take to be ready again once PostgreSQL is back
const RECOVERY_MS = 5000
const MODES: readonly CutMode[] = ['refuse', 'blackhole']

interface OutageApp extends TestApp {
  proxy: TcpProxy
}

/** The app on a fresh schema, reaching PostgreSQL only through a proxy the test can cut. */
async function appBehindProxy (t: TestContext, env: Record<string, string> = {}): Promise<OutageApp> {
  const direct = new URL(await freshDatabaseUrl(t, 'postgres'))
  const proxy = await startTcpProxy(t, {
    host: direct.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: direct.port === '' ? 5432 : Number(direct.port)
  })
  const viaProxy = new URL(direct)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  const petstore = await buildTestApp(t, { databaseUrl: viaProxy.toString(), env: { DATABASE_TIMEOUT_MS: String(TIMEOUT_MS), ...env } })
  return { ...petstore, proxy }
}

interface Timed {
  res: LightMyRequestResponse
  ms: number
}

/** Runs one request, measuring how long its answer took; fails if there is none within HANG_MS. */
async function timed (request: () => Promise<LightMyRequestResponse>): Promise<Timed> {
  const start = performance.now()
  const hang = new AbortController()
  const res = await Promise.race([
    request(),
    sleep(HANG_MS, undefined, { signal: hang.signal }).then(() => {
      throw new assert.AssertionError({ message: `no answer within ${HANG_MS} ms: the request hangs` })
    })
  ]).finally(() => { hang.abort() })
  return { res, ms: performance.now() - start }
}

/** Asserts a 503 service_unavailable Error body that came within the documented bound. */
function assertUnavailableInTime ({ res, ms }: Timed, what: string): void {
  assertError(res, 'service_unavailable')
  assert.ok(ms <= BOUND_MS, `${what} answered 503 after ${ms.toFixed(0)} ms, over 2 × DATABASE_TIMEOUT_MS (${2 * TIMEOUT_MS} ms) + slack`)
}

/** Polls /readyz until it answers 200; returns how long that took. */
async function waitUntilReady (petstore: OutageApp): Promise<number> {
  const start = performance.now()
  for (;;) {
    const { res } = await timed(() => petstore.app.inject({ method: 'GET', url: '/readyz' }))
    if (res.statusCode === 200) {
      assert.deepEqual(res.json(), { status: 'ready' })
      return performance.now() - start
    }
    // still recovering: the answer keeps its shape
    assertError(res, 'service_unavailable')
    const elapsed = performance.now() - start
    assert.ok(elapsed < RECOVERY_MS, `/readyz still 503 ${elapsed.toFixed(0)} ms after PostgreSQL came back: ${res.body}`)
    await sleep(50)
  }
}

/** Every pet, following the `next` links; each page must be a 200. */
async function listEveryPet (petstore: OutageApp): Promise<Array<Record<string, unknown>>> {
  const pets: Array<Record<string, unknown>> = []
  let url: string | undefined = '/v1/pets?limit=100'
  while (url !== undefined) {
    const res: LightMyRequestResponse = await petstore.app.inject({ method: 'GET', url, headers: petstore.auth })
    assert.equal(res.statusCode, 200, `listing after recovery: ${res.statusCode} ${res.body}`)
    pets.push(...res.json<Array<Record<string, unknown>>>())
    const next: string | undefined = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
    url = next === undefined ? undefined : new URL(next).pathname + new URL(next).search
  }
  return pets
}

function ms (value: number): string {
  return `${value.toFixed(0)} ms`
}

describe('PostgreSQL store outage (postgres)', requiresPostgres(), () => {
  for (const mode of MODES) {
    test(`When PostgreSQL becomes unreachable (${mode}), then /readyz, listPets and createPet answer 503 within 2 × DATABASE_TIMEOUT_MS, ` +
      'and when it is back, then the app is ready again by itself and no acknowledged write is lost', async (t) => {
      const petstore = await appBehindProxy(t)
      const acknowledged: Array<Record<string, unknown>> = []
      for (let i = 0; i < 5; i++) {
        const res = await postPet(petstore, { name: `before ${i}`, categoryId: i })
        assert.equal(res.statusCode, 201, res.body)
        acknowledged.push(res.json())
      }
      const requests: Record<string, () => Promise<LightMyRequestResponse>> = {
        '/readyz': () => petstore.app.inject({ method: 'GET', url: '/readyz' }),
        listPets: () => petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: petstore.auth }),
        createPet: () => postPet(petstore, { name: 'during the outage', categoryId: 1 })
      }

      petstore.proxy.cut(mode)
      // the first round meets the pool's existing connections, the second only new ones
      for (const round of [1, 2]) {
        for (const [what, request] of Object.entries(requests)) {
          const answer = await timed(request)
          assertUnavailableInTime(answer, what)
          t.diagnostic(`${mode}, round ${round}: ${what} 503 in ${ms(answer.ms)}`)
        }
      }
      // liveness needs no store: the process is up and serving
      const alive = await petstore.app.inject({ method: 'GET', url: '/healthz' })
      assert.equal(alive.statusCode, 200)

      const acceptedBeforeHeal = petstore.proxy.accepted
      petstore.proxy.heal()
      const recoveryMs = await waitUntilReady(petstore)
      t.diagnostic(`${mode}: /readyz 200 again ${ms(recoveryMs)} after heal`)
      assert.ok(petstore.proxy.accepted > acceptedBeforeHeal, 'the pool should have opened new connections')

      const after = await postPet(petstore, { name: 'after', categoryId: 9 })
      assert.equal(after.statusCode, 201, after.body)
      // the creates answered 503 never reached the server (the proxy dropped them), so exactly these
      assert.deepEqual(await listEveryPet(petstore), [...acknowledged, after.json()])
    })
  }

  for (const mode of MODES) {
    test(`When API keys are not cached and PostgreSQL is unreachable (${mode}), then authenticated requests answer 503, not 401 or 500`, async (t) => {
      const petstore = await appBehindProxy(t, { API_KEY_CACHE_SECONDS: '0' })
      const unknownKey = { authorization: `Bearer ${generateApiKey()}` }
      const before = await petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: petstore.auth })
      assert.equal(before.statusCode, 200, before.body)

      petstore.proxy.cut(mode)
      const answers: Record<string, Timed> = {
        'listPets with a valid key': await timed(() => petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: petstore.auth })),
        'createPet with a valid key': await timed(() => postPet(petstore, { name: 'during the outage', categoryId: 1 })),
        // the store cannot say whether the key exists: "unknown key" would be a lie
        'listPets with an unknown key': await timed(() => petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: unknownKey }))
      }
      for (const [what, answer] of Object.entries(answers)) {
        assertUnavailableInTime(answer, what)
        t.diagnostic(`${mode}: ${what} 503 in ${ms(answer.ms)}`)
      }
      // no key at all needs no store: still a 401
      assertError(await petstore.app.inject({ method: 'GET', url: '/v1/pets' }), 'unauthorized')

      petstore.proxy.heal()
      t.diagnostic(`${mode}: /readyz 200 again ${ms(await waitUntilReady(petstore))} after heal`)
      const valid = await petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: petstore.auth })
      assert.equal(valid.statusCode, 200, valid.body)
      assertError(await petstore.app.inject({ method: 'GET', url: '/v1/pets', headers: unknownKey }), 'unauthorized')
    })
  }

  for (const mode of MODES) {
    test(`When 50 creates are in flight as PostgreSQL becomes unreachable (${mode}) and 50 more come during the outage, ` +
      'then each answers 201 or 503 within the bound, and every pet answered 201 is there after recovery', async (t) => {
      const petstore = await appBehindProxy(t)
      const CUT_AFTER = 5
      let created = 0
      // 10 clients send 5 creates each, one after another, so creates keep arriving in several group
      // commits; the cut comes as the fifth 201 comes back, while the others are queued or on the wire
      const lanes = await Promise.all(Array.from({ length: 10 }, async (_, lane) => {
        const answers: Timed[] = []
        for (let i = lane * 5; i < lane * 5 + 5; i++) {
          const answer = await timed(() => postPet(petstore, { name: `in flight ${i}`, categoryId: i }))
          if (answer.res.statusCode === 201 && ++created === CUT_AFTER) petstore.proxy.cut(mode)
          answers.push(answer)
        }
        return answers
      }))
      const inFlight = lanes.flat()
      const duringCut = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        timed(() => postPet(petstore, { name: `during ${i}`, categoryId: i }))))

      for (const [i, answer] of inFlight.entries()) {
        if (answer.res.statusCode === 201) continue
        assertUnavailableInTime(answer, `in-flight create ${i}`)
      }
      for (const [i, answer] of duringCut.entries()) assertUnavailableInTime(answer, `create ${i} during the outage`)
      const ok = inFlight.filter((answer) => answer.res.statusCode === 201).map((answer) => answer.res.json<Record<string, unknown>>())
      const slowest = Math.max(...[...inFlight, ...duringCut].map((answer) => answer.ms))
      t.diagnostic(`${mode}: in flight ${ok.length} × 201, ${inFlight.length - ok.length} × 503; during the outage 50 × 503; slowest answer ${ms(slowest)}`)
      assert.ok(ok.length >= CUT_AFTER && ok.length < inFlight.length, 'the cut should have split the in-flight creates')

      petstore.proxy.heal()
      t.diagnostic(`${mode}: /readyz 200 again ${ms(await waitUntilReady(petstore))} after heal`)
      const listed = await listEveryPet(petstore)
      const byId = new Map(listed.map((pet) => [pet.id, pet]))
      for (const pet of ok) assert.deepEqual(byId.get(pet.id), pet, `pet ${String(pet.id)} was acknowledged with 201 but is missing or changed`)
      // a create answered 503 may have committed (its answer was lost), but nothing else appears, and nothing twice
      const names = listed.map((pet) => String(pet.name))
      assert.equal(new Set(names).size, names.length, 'a pet was stored twice')
      for (const name of names) assert.match(name, /^in flight \d+$/)
    })
  }

  test('When 60 requests arrive at once with DATABASE_POOL_SIZE=3, then the instance opens at most 3 connections for them', async (t) => {
    const api = await appBehindProxy(t, { DATABASE_POOL_SIZE: '3', API_KEY_CACHE_SECONDS: '0' })
    // start-up: one connection for the migrations, then the pool's first
    const atStart = api.proxy.accepted

    const answers = await Promise.all(Array.from({ length: 60 }, async () => api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })))

    assert.deepEqual(new Set(answers.map((res) => res.statusCode)), new Set([200]))
    // besides the pool: the migration's connection, and the one that listens for other instances' creates
    assert.ok(api.proxy.accepted - 2 <= 3, `connections opened: ${api.proxy.accepted} (${atStart} at start, one of them the migration's, one the listener's)`)
  })
})
