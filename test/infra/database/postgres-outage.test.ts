import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { generateApiKey } from '../../../src/capabilities/keys/api-keys.js'
import type { Pet } from '../../../src/capabilities/pets/pet-schemas.js'
import { ERRORS, RETRY_AFTER_SECONDS } from '../../../src/infra/errors/catalogue.js'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, postPet, type TestApp } from '../../helpers/build-app.js'
import { freshDatabaseUrl, requiresPostgres } from '../../helpers/databases.js'
import { describeFetchError, listAllPetsOver } from '../../helpers/live-server.js'
import { childEnv, freePort, runCli, serverProcesses, type ServerProcess } from '../../helpers/processes.js'
import { startTcpProxy, type CutMode, type TcpProxy } from '../../helpers/tcp-proxy.js'

// short, so that a whole outage plays out in a few seconds
const TIMEOUT_MS = 500
// a store call waits at most TIMEOUT_MS for a connection, then at most TIMEOUT_MS for its query: the bound is
// the behaviour (the timeout ends the wait; without it a blackholed request hangs). The slack on top is room for
// the event loop and inject on a loaded machine (answers came within 574 ms here), kept under a third
// TIMEOUT_MS, so that a longer wait still fails
const BOUND_MS = 2 * TIMEOUT_MS + 450
// a request still unanswered by then hangs: fail on it rather than wait for the test's timeout
const HANG_MS = 5000
// how long the app may take to be ready again once PostgreSQL is back
const RECOVERY_MS = 5000
const MODES: readonly CutMode[] = ['refuse', 'blackhole']

interface OutageApp extends TestApp {
  proxy: TcpProxy
}

/** A fresh schema and a proxy to its server that the test can cut; `databaseUrl` leads through the proxy, `directUrl` does not. */
async function schemaBehindProxy (t: TestContext): Promise<{ databaseUrl: string, directUrl: string, proxy: TcpProxy }> {
  const direct = new URL(await freshDatabaseUrl(t, 'postgres'))
  const proxy = await startTcpProxy(t, {
    host: direct.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: direct.port === '' ? 5432 : Number(direct.port)
  })
  const viaProxy = new URL(direct)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  return { databaseUrl: viaProxy.toString(), directUrl: direct.toString(), proxy }
}

/** The app on a fresh schema, reaching PostgreSQL only through a proxy the test can cut. */
async function appBehindProxy (t: TestContext, env: Record<string, string> = {}): Promise<OutageApp> {
  const { databaseUrl, proxy } = await schemaBehindProxy(t)
  const petstore = await buildTestApp(t, { databaseUrl, env: { DATABASE_TIMEOUT_MS: String(TIMEOUT_MS), ...env } })
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

/** Asserts a 503 service_unavailable Error body with its Retry-After that came within the documented bound. */
function assertUnavailableInTime ({ res, ms }: Timed, what: string): void {
  assertError(res, 'service_unavailable')
  assert.equal(res.headers['retry-after'], String(RETRY_AFTER_SECONDS), `${what}: Retry-After`)
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
    assert.equal(res.headers['retry-after'], String(RETRY_AFTER_SECONDS))
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
    // besides the pool: the migration's connection, and the one connection that listens for other instances'
    // changes (the pets' list version and the webhook delivery's events recorded, each a channel on it)
    assert.ok(api.proxy.accepted - 2 <= 3, `connections opened: ${api.proxy.accepted} (${atStart} at start, one of them the migration's, one the listener's)`)
  })
})

/** One answer of a server process: its status, `Retry-After`, body, and the request id it was sent with. */
interface ProcessAnswer {
  status: number
  retryAfter: string | null
  body: string
  requestId: string
}

let requestCount = 0

/** Sends one request to a server process with an id of its own; fails when no answer comes within HANG_MS. */
async function ask (server: ServerProcess, path: string, init: { method?: string, headers?: Record<string, string>, body?: unknown } = {}): Promise<ProcessAnswer> {
  const requestId = `outage-${++requestCount}`
  const headers: Record<string, string> = { 'x-request-id': requestId, ...init.headers }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(`${server.baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(HANG_MS)
    })
  } catch (error) {
    // a crash closes the connection a moment before its exit is seen here
    const exit = await Promise.race([server.exited, sleep(1_000)])
    const state = exit === undefined
      ? 'the server still runs'
      : `the server exited (${JSON.stringify(exit)}); stderr:\n${server.stderr}\nstdout ends:\n${server.stdout.trimEnd().split('\n').slice(-3).map((line) => line.slice(0, 400)).join('\n')}`
    assert.fail(`${init.method ?? 'GET'} ${path}: no answer (${describeFetchError(error)}); ${state}`)
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), requestId }
}

/** Asserts a 503 service_unavailable Error body with its Retry-After, from a server process. */
function assertProcessUnavailable (answer: ProcessAnswer, what: string): void {
  assert.equal(answer.status, ERRORS.service_unavailable.status, `${what}: expected 503 service_unavailable, got ${answer.status} ${answer.body}`)
  const body = JSON.parse(answer.body) as Record<string, unknown>
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'], what)
  assert.equal(body.code, 'service_unavailable', what)
  assert.equal(body.status, ERRORS.service_unavailable.status, what)
  assert.equal(answer.retryAfter, String(RETRY_AFTER_SECONDS), `${what}: Retry-After`)
}

/** Polls /readyz until it answers 200 (at most RECOVERY_MS); meanwhile each answer must be the 503 with Retry-After. */
async function waitUntilProcessReady (server: ServerProcess): Promise<void> {
  const deadline = Date.now() + RECOVERY_MS
  for (;;) {
    const answer = await ask(server, '/readyz')
    if (answer.status === 200) {
      assert.deepEqual(JSON.parse(answer.body), { status: 'ready' })
      return
    }
    assertProcessUnavailable(answer, '/readyz while recovering')
    assert.ok(Date.now() < deadline, `/readyz still 503 ${RECOVERY_MS} ms after PostgreSQL came back: ${answer.body}`)
    await sleep(50)
  }
}

/** Asserts that the process that answered `answer` is the one with `pid`: its access line names the request id and that pid. */
async function assertAnsweredBy (server: ServerProcess, pid: number, answer: ProcessAnswer): Promise<void> {
  const line = await server.waitForStdout(new RegExp(`^.*"reqId":"${answer.requestId}".*"msg":"request completed".*$`, 'm'), HANG_MS)
  assert.equal((JSON.parse(line[0]) as { pid: number }).pid, pid, `request ${answer.requestId} was answered by another process`)
}

/** How many times a server process has read a page of pets from its store, from its metrics listener: a page served from its cache adds none. */
async function storeListReads (metricsPort: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(HANG_MS) })
  const text = await res.text()
  assert.equal(res.status, 200, text)
  return [...text.matchAll(/^petstore_store_query_duration_seconds_count\{([^}]*)\} (\d+)$/gm)]
    .filter(([, labels]) => labels?.includes('method="listPets"'))
    .reduce((sum, [, , count]) => sum + Number(count), 0)
}

/**
 * Waits until the process caches pages, which it does only while its LISTEN connection (opened on the
 * first list, reopened a second after it is lost) is up: so that each cut also cuts that connection.
 */
async function untilListening (server: ServerProcess, metricsPort: number, auth: { authorization: string }): Promise<void> {
  const deadline = Date.now() + RECOVERY_MS
  for (;;) {
    const first = await ask(server, '/v1/pets', { headers: auth })
    assert.equal(first.status, 200, first.body)
    const reads = await storeListReads(metricsPort)
    const second = await ask(server, '/v1/pets', { headers: auth })
    assert.equal(second.status, 200, second.body)
    if (await storeListReads(metricsPort) === reads) return
    assert.ok(Date.now() < deadline, `the server did not cache a page within ${RECOVERY_MS} ms: its LISTEN connection is not up`)
    await sleep(50)
  }
}

/** Rounds of cut and heal per mode against one server process. */
const ROUNDS = 2

describe('PostgreSQL outage under a real server process (postgres)', requiresPostgres(), () => {
  for (const mode of MODES) {
    test(`When PostgreSQL is cut (${mode}) and healed ${ROUNDS} times under a server process, then during each cut it answers 503 with Retry-After, never 401 or 500, ` +
      'after each heal 200 again, and it is the same process throughout, alive and answering, that exits 0 on SIGTERM', async (t) => {
      const servers = serverProcesses(t)
      const { databaseUrl, directUrl, proxy } = await schemaBehindProxy(t)
      // a key in the store, not in PETSTORE_API_KEYS: the process needs the store to know it
      const created = await runCli(['keys', 'create', '--name', 'outage'], childEnv({ DATABASE_URL: directUrl, LOG_LEVEL: 'silent' }))
      assert.equal(created.code, 0, created.stderr)
      const apiKey = /^\s+(petstore_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1] ?? assert.fail(`no key in:\n${created.stdout}`)
      const auth = { authorization: `Bearer ${apiKey}` }
      const unknownKey = { authorization: `Bearer ${generateApiKey()}` }
      const metricsPort = await freePort()
      // no key cache: every authenticated request asks the store, so an outage cannot pass for an unknown key
      const server = await servers.start({
        DATABASE_URL: databaseUrl,
        METRICS_PORT: String(metricsPort),
        DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
        API_KEY_CACHE_SECONDS: '0',
        RATE_LIMIT_MAX: '0'
      })
      const pid = server.pid
      const acknowledged: Pet[] = []
      const create = async (name: string): Promise<ProcessAnswer> => ask(server, '/v1/pets', { method: 'POST', headers: auth, body: { name, categoryId: acknowledged.length + 1 } })
      const first = await create('before the outages')
      assert.equal(first.status, 201, first.body)
      acknowledged.push(JSON.parse(first.body) as Pet)
      const petId = acknowledged[0]?.id ?? assert.fail('no pet')

      for (let round = 1; round <= ROUNDS; round++) {
        // the cut also takes the LISTEN connection, which the process must survive losing
        await untilListening(server, metricsPort, auth)
        const acceptedBeforeCut = proxy.accepted
        proxy.cut(mode)
        let unavailable = 0
        // twice: the first requests meet the pool's open connections, the second only new ones
        for (const pass of [1, 2]) {
          const answers: Record<string, ProcessAnswer> = Object.fromEntries(await Promise.all(Object.entries({
            '/readyz': async () => ask(server, '/readyz'),
            // a page listed within the last second may come from the page cache (its bound): this one was never listed
            'listPets with the key': async () => ask(server, `/v1/pets?limit=${10 * round + pass}`, { headers: auth }),
            'getPet with the key': async () => ask(server, `/v1/pets/${petId}`, { headers: auth }),
            'createPet with the key': async () => create(`during cut ${round}`),
            'updatePet with the key': async () => ask(server, `/v1/pets/${petId}`, { method: 'PATCH', headers: auth, body: { name: `cut ${round}` } }),
            // the store cannot say whether the key exists: "unknown key" would be a lie
            'listPets with an unknown key': async () => ask(server, '/v1/pets', { headers: unknownKey })
          }).map(async ([what, request]) => [what, await request()] as const)))
          for (const [what, answer] of Object.entries(answers)) {
            assert.notEqual(answer.status, ERRORS.unauthorized.status, `${mode}, cut ${round}, pass ${pass}: ${what} answered 401: ${answer.body}`)
            assert.ok(answer.status < 500 || answer.status === 503, `${mode}, cut ${round}, pass ${pass}: ${what} answered ${answer.status}: ${answer.body}`)
            assertProcessUnavailable(answer, `${mode}, cut ${round}, pass ${pass}: ${what}`)
            unavailable++
          }
        }
        // liveness needs no store, nor does refusing a request without a key
        const alive = await ask(server, '/healthz')
        assert.equal(alive.status, 200, alive.body)
        assert.equal((await ask(server, '/v1/pets')).status, ERRORS.unauthorized.status)

        proxy.heal()
        await waitUntilProcessReady(server)
        assert.ok(proxy.accepted > acceptedBeforeCut, 'the process should have opened new connections')
        const listed = await ask(server, '/v1/pets', { headers: auth })
        assert.equal(listed.status, 200, `${mode}, after heal ${round}: listPets ${listed.body}`)
        const read = await ask(server, `/v1/pets/${petId}`, { headers: auth })
        assert.equal(read.status, 200, `${mode}, after heal ${round}: getPet ${read.body}`)
        const created = await create(`after heal ${round}`)
        assert.equal(created.status, 201, `${mode}, after heal ${round}: createPet ${created.body}`)
        acknowledged.push(JSON.parse(created.body) as Pet)
        assert.equal((await ask(server, '/v1/pets', { headers: unknownKey })).status, ERRORS.unauthorized.status, 'an unknown key is refused again')
        assert.ok(server.running, `${mode}: the server exited during round ${round}; stderr:\n${server.stderr}`)
        assert.equal(server.pid, pid)
        await assertAnsweredBy(server, pid, created)
        t.diagnostic(`${mode}, round ${round}: ${unavailable} requests during the cut answered 503 with Retry-After; 200 and 201 after the heal from pid ${pid}`)
      }

      // the creates answered 503 never reached PostgreSQL (the proxy dropped them), so exactly these
      assert.deepEqual(await listAllPetsOver(server.baseUrl, apiKey), acknowledged)
      assert.deepEqual(await server.stop(), { code: 0, signal: null }, `stderr:\n${server.stderr}`)
      assert.equal(server.stderr, '')
    })
  }
})
