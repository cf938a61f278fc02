import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { request, type IncomingHttpHeaders } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { tempDir } from '../helpers/build-app.js'
import { execSql, freshDatabaseUrl, testStores, type StoreKind } from '../helpers/databases.js'
import { bearer, describeFetchError, listAllPetsOver, loadEnv, mapConcurrently, sleep, strongApiKey } from '../helpers/live-server.js'
import {
  childPids, freePort, openSocket, PROJECT_ROOT, readResponse, serverProcesses, within, type ServerProcess
} from '../helpers/processes.js'

// WORKERS=N runs the build (`node dist/bin/server.js`) as production does: a primary and N worker
// processes sharing the port through node:cluster. Run `npm run build` before these tests.

const WORKERS = 2
const KEY = /petstore_[A-Za-z0-9_-]{43}/g
const BANNER = /No API key existed, so petstore created one/g
/** The primary's line once every worker listens. */
const CLUSTER_READY = new RegExp(`"workers":${WORKERS},.*"msg":"petstore ready"`)
/** Starting a primary and its workers on a busy two-core machine. */
const START_MS = 30_000
/** The documented bound on how old a list served by another worker may be on PostgreSQL (LISTEN/NOTIFY). */
const POSTGRES_LIST_BOUND_MS = 1_000
/** The primary waits this long before replacing a crashed worker (src/bin/cluster.ts). */
const RESTART_DELAY_MS = 1_000
/** The README's bound: the process exits within 15 s of SIGTERM, whatever its clients do. */
const DRAIN_BOUND_MS = 15_000

interface LogRecord {
  pid: number
  msg: string
  reqId?: string
  [field: string]: unknown
}

const parsedLogs = new WeakMap<ServerProcess, { parsedUpTo: number, records: LogRecord[] }>()

/** The JSON lines the processes have written to stdout so far (the primary's and every worker's), in order. */
function logRecords (server: ServerProcess): readonly LogRecord[] {
  const parsed = parsedLogs.get(server) ?? { parsedUpTo: 0, records: [] }
  parsedLogs.set(server, parsed)
  // up to the last complete line: the rest may still be being written
  const end = server.stdout.lastIndexOf('\n') + 1
  for (const line of server.stdout.slice(parsed.parsedUpTo, end).split('\n')) {
    if (line.startsWith('{')) parsed.records.push(JSON.parse(line) as LogRecord)
  }
  parsed.parsedUpTo = Math.max(parsed.parsedUpTo, end)
  return parsed.records
}

/** Polls `probe` until it returns something other than undefined, for at most `ms`. */
async function waitFor<T> (what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const found = probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`)
    await sleep(20)
  }
}

/** Which process answered each of `requestIds`, read from the access log (waits for the lines, written once the answer is out). */
async function servingPids (server: ServerProcess, requestIds: readonly string[]): Promise<Map<string, number>> {
  return waitFor(`access-log lines for ${requestIds.length} requests`, 5_000, () => {
    const pids = new Map<string, number>()
    for (const record of logRecords(server)) {
      if (record.msg === 'request completed' && record.reqId !== undefined) pids.set(record.reqId, record.pid)
    }
    const found = new Map(requestIds.flatMap((id) => pids.has(id) ? [[id, pids.get(id) as number] as const] : []))
    return found.size === requestIds.length ? found : undefined
  })
}

function countBy<T> (items: Iterable<T>): Map<T, number> {
  const counts = new Map<T, number>()
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1)
  return counts
}

function processExists (pid: number): boolean {
  return existsSync(`/proc/${pid}`)
}

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * One request on a connection of its own (`agent: false`, `Connection: close`), so that the
 * primary hands it to whichever worker is next; `requestId` is echoed in that worker's access log.
 */
async function send (server: ServerProcess, apiKey: string, method: 'GET' | 'POST', path: string,
  options: { requestId: string, body?: unknown, timeoutMs?: number }): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: server.port,
      method,
      path,
      agent: false,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: {
        ...bearer(apiKey),
        connection: 'close',
        'x-request-id': options.requestId,
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) })
      }
    }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function listPets (server: ServerProcess, apiKey: string, requestId: string): Promise<Pet[]> {
  const answer = await send(server, apiKey, 'GET', '/v1/pets?limit=100', { requestId })
  assert.equal(answer.status, 200, `GET /v1/pets (${requestId}): ${answer.body}`)
  return JSON.parse(answer.body) as Pet[]
}

async function createPet (server: ServerProcess, apiKey: string, requestId: string, pet: Omit<Pet, 'id'>): Promise<Pet> {
  const answer = await send(server, apiKey, 'POST', '/v1/pets', { requestId, body: pet })
  assert.equal(answer.status, 201, `POST /v1/pets (${requestId}): ${answer.body}`)
  return JSON.parse(answer.body) as Pet
}

/**
 * The value of the sample `name` with exactly these label values among its labels, in the
 * Prometheus text format; undefined when there is none. Fails when several samples match.
 */
function sample (text: string, name: string, labels: Record<string, string>): number | undefined {
  const values: number[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [key, value]))
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) values.push(Number(match[3]))
  }
  assert.ok(values.length <= 1, `${values.length} samples of ${name} match ${JSON.stringify(labels)}:\n${text}`)
  return values[0]
}

let buildChecked = false

/** Fails without dist/, and notes (once) in the test output when dist/ predates a change in src/: these tests run the build. */
function noteStaleBuild (t: TestContext): void {
  const built = join(PROJECT_ROOT, 'dist', 'bin', 'server.js')
  assert.ok(existsSync(built), 'dist/bin/server.js is missing: run npm run build first (these tests run the build, as production does)')
  if (buildChecked) return
  buildChecked = true
  const builtAt = statSync(built).mtimeMs
  const newer = readdirSync(join(PROJECT_ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && statSync(join(PROJECT_ROOT, 'src', file)).mtimeMs > builtAt)
  if (newer.length > 0) t.diagnostic(`dist/ is older than src/ (${newer.join(', ')}): these tests ran the old build; run npm run build`)
}

interface Cluster {
  server: ServerProcess
  /** The worker processes, as started. */
  workers: number[]
  databaseUrl: string
  apiKey: string
}

/**
 * A primary with WORKERS=2 on a fresh store, and its workers, once all of them listen. With
 * `envKey` (the default) the store gets no key and PETSTORE_API_KEYS holds `apiKey`; without, the
 * store is left empty so that the primary creates and prints the bootstrap key (`apiKey` is '').
 * Every process it started is killed when the test ends, workers that outlived their primary too.
 */
async function startCluster (t: TestContext, store: StoreKind, options: { envKey?: boolean, env?: Record<string, string> } = {}): Promise<Cluster> {
  noteStaleBuild(t)
  const servers = serverProcesses(t, { entry: 'build' })
  const spawned: ServerProcess[] = []
  // after the primary is killed (its workers with it): a worker left behind by a primary that exited on its own
  t.after(() => {
    for (const server of spawned) {
      for (const pid of new Set(logRecords(server).map((record) => record.pid))) {
        if (pid === server.child.pid || !processExists(pid)) continue
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/bin/server.js')) process.kill(pid, 'SIGKILL')
      }
    }
  })
  const databaseUrl = await freshDatabaseUrl(t, store)
  const apiKey = options.envKey === false ? '' : strongApiKey()
  const env = options.envKey === false ? { DATABASE_URL: databaseUrl, RATE_LIMIT_MAX: '0' } : loadEnv(databaseUrl, apiKey)
  const server = await servers.spawn({ ...env, WORKERS: String(WORKERS), ...options.env })
  spawned.push(server)
  await server.waitForStdout(CLUSTER_READY, START_MS)
  const workers = await waitFor(`${WORKERS} worker processes`, 5_000, () => {
    const pids = childPids(server.child.pid)
    return pids.length === WORKERS ? pids : undefined
  })
  return { server, workers, databaseUrl, apiKey }
}

/** The head of a `POST /v1/pets` with a JSON body of `contentLength` bytes and our request id. */
function createHead (server: ServerProcess, apiKey: string, requestId: string, contentLength: number): string {
  return `POST /v1/pets HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: Bearer ${apiKey}\r\nx-request-id: ${requestId}\r\n` +
    `content-type: application/json\r\ncontent-length: ${contentLength}\r\n\r\n`
}

for (const store of testStores()) {
  describe(`WORKERS=${WORKERS} (${store})`, () => {
    test('When the cluster starts on a fresh store, then the primary prints one bootstrap key once, logs petstore ready with workers: 2, runs 2 workers, and the key works on both', async (t) => {
      const { server, workers, databaseUrl } = await startCluster(t, store, { envKey: false })
      const [key = ''] = await server.waitForStdout(new RegExp(KEY.source))

      const answers = []
      for (let i = 0; i < 4; i++) answers.push(await send(server, key, 'GET', '/v1/pets', { requestId: `bootstrap-${i}` }))
      const served = await servingPids(server, answers.map((_, i) => `bootstrap-${i}`))

      assert.equal(new Set(server.stdout.match(KEY)).size, 1, `expected exactly one key, got:\n${server.stdout}`)
      assert.equal(server.stdout.match(BANNER)?.length, 1, `the key was shown more than once:\n${server.stdout}`)
      assert.doesNotMatch(server.stderr, KEY)
      assert.equal(Number((await execSql(databaseUrl, 'SELECT COUNT(*) AS n FROM api_keys'))[0]?.n), 1, 'one key in the store')
      const ready = logRecords(server).filter((record) => record.msg === 'petstore ready' && record.pid === server.child.pid)
      assert.equal(ready.length, 1)
      assert.equal(ready[0]?.workers, WORKERS)
      assert.equal(workers.length, WORKERS)
      assert.ok(!workers.includes(server.child.pid ?? -1))
      for (const answer of answers) {
        assert.equal(answer.status, 200, answer.body)
        assert.deepEqual(JSON.parse(answer.body), [])
      }
      assert.deepEqual([...new Set(served.values())].sort(), [...workers].sort(), 'the key works on each worker')
    })

    test('When 40 requests arrive over new connections, then both workers answer some of them', async (t) => {
      const { server, workers, apiKey } = await startCluster(t, store)
      const ids = Array.from({ length: 40 }, (_, i) => `spread-${i}`)

      const answers = []
      for (const requestId of ids) answers.push(await send(server, apiKey, 'GET', '/v1/pets', { requestId }))
      const served = await servingPids(server, ids)

      assert.deepEqual(answers.map((answer) => answer.status), ids.map(() => 200))
      const perWorker = countBy(served.values())
      assert.deepEqual([...perWorker.keys()].sort(), [...workers].sort(), 'every answer came from a worker, and from each of them')
      t.diagnostic(`answers per worker: ${[...perWorker].map(([pid, n]) => `${pid}: ${n}`).join(', ')}`)
    })

    test(store === 'sqlite'
      ? 'When a pet is created through one worker, then a list answered by the other worker right after, whose page was cached, holds it'
      : `When a pet is created through one worker, then a list answered by the other worker within ${POSTGRES_LIST_BOUND_MS} ms holds it`, async (t) => {
      const { server, apiKey } = await startCluster(t, store)
      const rounds = 30
      const delays: number[] = []
      const missedFirstLists: number[] = []
      const roundIds: Array<{ before: string[], create: string, after: string }> = []

      for (let round = 0; round < rounds; round++) {
        // both workers list, and so cache, the first page as it is before the create
        const before = Array.from({ length: 4 }, (_, i) => `ryw-${round}-before-${i}`)
        for (const requestId of before) await listPets(server, apiKey, requestId)
        const pet = await createPet(server, apiKey, `ryw-${round}-create`, { name: `Round ${round}`, categoryId: round, status: 'available' })
        const createdAt = performance.now()
        let after = `ryw-${round}-after-0`
        if (store === 'sqlite') {
          const listed = await listPets(server, apiKey, after)
          assert.ok(listed.some((listedPet) => listedPet.id === pet.id), `round ${round}: pet ${pet.id} is missing from the list right after its 201`)
        } else {
          // a list begun more than the bound after the 201 must hold the pet
          for (let attempt = 0; ; attempt++) {
            after = `ryw-${round}-after-${attempt}`
            const startedAt = performance.now()
            const listed = await listPets(server, apiKey, after)
            if (listed.some((listedPet) => listedPet.id === pet.id)) {
              delays.push(startedAt - createdAt)
              if (attempt > 0) missedFirstLists.push(round)
              break
            }
            assert.ok(startedAt - createdAt <= POSTGRES_LIST_BOUND_MS,
              `round ${round}: pet ${pet.id} is still missing from a list begun ${(startedAt - createdAt).toFixed(0)} ms after its 201`)
            await sleep(10)
          }
        }
        roundIds.push({ before, create: `ryw-${round}-create`, after })
      }
      const served = await servingPids(server, roundIds.flatMap(({ before, create, after }) => [...before, create, after]))

      // the rounds that test what they mean to: the list came from the worker that did not create, and it had cached the page
      const crossWorker = roundIds.filter(({ before, create, after }) =>
        served.get(after) !== served.get(create) && before.some((id) => served.get(id) === served.get(after)))
      assert.ok(crossWorker.length >= rounds / 3,
        `only ${crossWorker.length} of ${rounds} rounds listed through the other worker after it had cached the page`)
      t.diagnostic(`${crossWorker.length} of ${rounds} rounds listed through the worker that did not create, after it had cached the page`)
      if (store === 'postgres') {
        t.diagnostic(`the new pet was in the first list begun at most ${Math.max(...delays).toFixed(1)} ms after its 201 ` +
          `(bound ${POSTGRES_LIST_BOUND_MS} ms); the first list after the 201 missed it in ${missedFirstLists.length} of ${rounds} rounds`)
      }
    })

    test('When 200 creates arrive 20 at a time through both workers, then all answer 201 with distinct ids and the full list holds exactly those pets', async (t) => {
      const { server, workers, apiKey } = await startCluster(t, store)
      const bodies = Array.from({ length: 200 }, (_, i) => ({ name: `Concurrent ${i}`, categoryId: i, status: (['available', 'pending', 'sold'] as const)[i % 3] }))

      const answers = await mapConcurrently(bodies.map((body, i) => ({ body, requestId: `concurrent-${i}` })), 20,
        async ({ body, requestId }) => ({ requestId, answer: await send(server, apiKey, 'POST', '/v1/pets', { requestId, body }) }))
      const served = await servingPids(server, answers.map(({ requestId }) => requestId))
      const listed = await listAllPetsOver(server.baseUrl, apiKey)

      const failed = answers.filter(({ answer }) => answer.status !== 201)
      assert.deepEqual(failed.map(({ requestId, answer }) => `${requestId}: ${answer.status} ${answer.body}`), [])
      const created = answers.map(({ answer }) => JSON.parse(answer.body) as Pet)
      created.forEach((pet, i) => { assert.deepEqual(pet, { id: pet.id, ...bodies[i] }) })
      assert.equal(new Set(created.map((pet) => pet.id)).size, bodies.length, 'distinct ids')
      const perWorker = countBy(served.values())
      assert.deepEqual([...perWorker.keys()].sort(), [...workers].sort(), 'both workers created pets')
      assert.deepEqual(listed, [...created].sort((a, b) => a.id - b.id))
      t.diagnostic(`creates per worker: ${[...perWorker].map(([pid, n]) => `${pid}: ${n}`).join(', ')}`)
    })

    test('When a worker is killed with SIGKILL, then the primary logs worker exited and starts another, and requests keep being answered meanwhile', async (t) => {
      const { server, workers, apiKey } = await startCluster(t, store)
      const [victim = -1, survivor = -1] = workers
      const lanes = 4
      const outcomes: Array<{ requestId: string, startedAt: number, status?: number, error?: string }> = []
      const stop = new AbortController()
      const load = Promise.all(Array.from({ length: lanes }, async (_, lane) => {
        for (let i = 0; !stop.signal.aborted; i++) {
          const requestId = `kill-${lane}-${i}`
          const startedAt = performance.now()
          try {
            const answer = await send(server, apiKey, 'GET', '/v1/pets', { requestId, timeoutMs: 5_000 })
            outcomes.push({ requestId, startedAt, status: answer.status })
          } catch (error) {
            outcomes.push({ requestId, startedAt, error: describeFetchError(error) })
          }
          // steady traffic, not a flood: the machine running the tests is shared
          await sleep(5)
        }
      }))
      t.after(async () => {
        stop.abort()
        await load
      })
      const answeredBy = (): Set<number> => new Set(logRecords(server).filter((record) => record.msg === 'request completed').map((record) => record.pid))
      await waitFor('both workers answering the load', 10_000, () => workers.every((pid) => answeredBy().has(pid)) ? true : undefined)

      const killedAt = performance.now()
      process.kill(victim, 'SIGKILL')
      const exited = await waitFor('the primary logging the worker\'s exit', 5_000, () =>
        logRecords(server).find((record) => record.msg === 'worker exited' && record.worker === victim))
      const noticedAt = performance.now()
      const replacement = await waitFor('a new worker process', RESTART_DELAY_MS + 5_000, () =>
        childPids(server.child.pid).find((pid) => pid !== survivor && pid !== victim))
      const replacedAt = performance.now()
      await waitFor('the new worker answering', 10_000, () => answeredBy().has(replacement) ? true : undefined)
      stop.abort()
      await load
      const whileDown = outcomes.filter(({ startedAt, status }) => status !== undefined && startedAt > killedAt && startedAt < replacedAt)
      const served = await servingPids(server, whileDown.map(({ requestId }) => requestId))

      assert.equal(exited.pid, server.child.pid, 'the primary logs it')
      assert.equal(exited.signal, 'SIGKILL')
      assert.ok(server.running)
      assert.deepEqual(childPids(server.child.pid).sort(), [survivor, replacement].sort(), 'two workers again')
      assert.ok(!processExists(victim))
      assert.deepEqual(outcomes.filter(({ status }) => status !== undefined && status !== 200), [], 'every answer is a 200')
      const failures = outcomes.filter(({ error }) => error !== undefined)
      // only connections the killed worker held, or was being handed before the primary noticed, may fail
      assert.deepEqual(failures.filter(({ startedAt }) => startedAt > noticedAt), [], 'a request sent after the primary noticed the exit failed')
      assert.ok(whileDown.length > 0, 'no request was answered while a worker was missing')
      assert.deepEqual(whileDown.filter(({ requestId }) => served.get(requestId) !== survivor), [], 'while a worker was missing, the other answered')
      t.diagnostic(`${outcomes.length} requests; ${failures.length} failed (${failures.map(({ error }) => error).join(', ')}); ` +
        `${whileDown.length} answered by the surviving worker while one was missing; ` +
        `the exit was logged ${(noticedAt - killedAt).toFixed(0)} ms and a new worker ran ${(replacedAt - killedAt).toFixed(0)} ms after the kill`)
    })

    test('When SIGTERM reaches the primary while 20 creates are still uploading on both workers, then each gets its complete 201, the primary exits 0 and no worker remains', async (t) => {
      const { server, workers, apiKey, databaseUrl } = await startCluster(t, store, { env: { LOG_LEVEL: 'debug' } })
      const bodies = Array.from({ length: 20 }, (_, i) => JSON.stringify({ name: `drain-${i}`, categoryId: i, status: 'pending' }))
      const sockets: Socket[] = []
      t.after(() => { for (const socket of sockets) socket.destroy() })
      for (let i = 0; i < bodies.length; i++) {
        const socket = await openSocket(server.port)
        // a write racing the close after the answer must not crash the runner; every read reports its own error
        socket.on('error', () => {})
        sockets.push(socket)
      }
      const answers = Promise.allSettled(sockets.map(async (socket) => readResponse(socket, DRAIN_BOUND_MS)))
      sockets.forEach((socket, i) => {
        const body = bodies[i] ?? ''
        socket.write(createHead(server, apiKey, `drain-${i}`, Buffer.byteLength(body)) + body.slice(0, 8))
      })
      // every request has been routed to a worker (headers read, "incoming request" logged); its body is still coming
      const arrived = await waitFor('every create arriving at a worker', 10_000, () => {
        const records = logRecords(server).filter((record) => record.msg === 'incoming request' && record.reqId?.startsWith('drain-') === true)
        return records.length === bodies.length ? records : undefined
      })

      const sigtermAt = performance.now()
      server.child.kill('SIGTERM')
      // both workers have begun to drain before any upload completes
      await waitFor('both workers draining', 5_000, () => {
        const draining = new Set(logRecords(server).filter((record) => record.msg === 'shutting down: finishing in-flight requests').map((record) => record.pid))
        return workers.every((pid) => draining.has(pid)) ? true : undefined
      })
      const runningWhenUploadsEnd = server.running
      sockets.forEach((socket, i) => { socket.write((bodies[i] ?? '').slice(8)) })
      const settled = await answers
      const exit = await server.waitForExit(DRAIN_BOUND_MS + 2_000)
      const drainMs = performance.now() - sigtermAt

      assert.deepEqual([...new Set(arrived.map((record) => record.pid))].sort(), [...workers].sort(), 'both workers hold uploads')
      assert.ok(runningWhenUploadsEnd, 'the primary exited before the uploads were complete')
      const pets = settled.map((result, i) => {
        assert.equal(result.status, 'fulfilled', `create ${i} got no complete answer: ${result.status === 'rejected' ? String(result.reason) : ''}`)
        const response = (result).value
        assert.equal(response.status, 201, `create ${i}: ${response.body}`)
        // answered during the drain: the connection is not kept alive
        assert.equal(response.headers.connection, 'close')
        const pet = JSON.parse(response.body) as Pet
        assert.deepEqual(pet, { id: pet.id, ...JSON.parse(bodies[i] ?? '') })
        return pet
      })
      assert.deepEqual(exit, { code: 0, signal: null })
      assert.deepEqual(workers.filter(processExists), [], 'a worker outlived the primary')
      assert.deepEqual((await execSql(databaseUrl, 'SELECT name FROM pets ORDER BY id')).map((row) => row.name),
        pets.sort((a, b) => a.id - b.id).map((pet) => pet.name))
      t.diagnostic(`uploads per worker: ${[...countBy(arrived.map((record) => record.pid))].map(([pid, n]) => `${pid}: ${n}`).join(', ')}; ` +
        `exit 0 ${drainMs.toFixed(0)} ms after SIGTERM`)
    })

    test('When METRICS_PORT is set, then GET /metrics on the primary counts the requests of both workers together', async (t) => {
      const metricsPort = await freePort()
      const { server, workers, apiKey } = await startCluster(t, store, { env: { METRICS_PORT: String(metricsPort) } })
      const ids = Array.from({ length: 30 }, (_, i) => `metrics-${i}`)
      const labels = { operation: 'listPets', method: 'GET', status: '200' }

      for (const requestId of ids) assert.equal((await send(server, apiKey, 'GET', '/v1/pets', { requestId })).status, 200)
      const served = await servingPids(server, ids)
      // counted once the answer has gone out: poll until the last ones are in
      let text = ''
      for (const deadline = Date.now() + 5_000; ; await sleep(50)) {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(5_000) })
        assert.equal(res.status, 200)
        text = await res.text()
        if (sample(text, 'petstore_http_requests_total', labels) === ids.length || Date.now() > deadline) break
      }
      const counted = sample(text, 'petstore_http_requests_total', labels)

      assert.deepEqual([...new Set(served.values())].sort(), [...workers].sort(), 'both workers answered')
      assert.equal(counted, ids.length, `petstore_http_requests_total${JSON.stringify(labels)} in:\n${text}`)
      t.diagnostic(`listPets answers per worker: ${[...countBy(served.values())].map(([pid, n]) => `${pid}: ${n}`).join(', ')}; /metrics counted ${String(counted)}`)
    })
  })
}

describe(`WORKERS=${WORKERS}: start-up failures`, () => {
  /** Holds 127.0.0.1:`port` (a free one) until the test ends. */
  async function occupyPort (t: TestContext): Promise<number> {
    const blocker: Server = createServer()
    await new Promise<void>((resolve, reject) => {
      blocker.once('error', reject)
      blocker.listen(0, '127.0.0.1', resolve)
    })
    t.after(() => new Promise<void>((resolve) => { blocker.close(() => { resolve() }) }))
    const address = blocker.address()
    assert.ok(address !== null && typeof address === 'object')
    return address.port
  }

  test('When the port is taken so that no worker can listen, then the primary exits 1 within seconds instead of restarting them', async (t) => {
    noteStaleBuild(t)
    const servers = serverProcesses(t, { entry: 'build' })
    const port = await occupyPort(t)
    const databaseUrl = `sqlite:${join(await tempDir(t), 'petstore.db')}`
    const startedAt = performance.now()

    const server = await servers.spawn({ ...loadEnv(databaseUrl, strongApiKey()), WORKERS: String(WORKERS), PORT: String(port) })
    const exit = await within(15_000, 'the primary kept running', server.exited)
    const exitMs = performance.now() - startedAt

    assert.deepEqual(exit, { code: 1, signal: null }, `stdout:\n${server.stdout}\nstderr:\n${server.stderr}`)
    assert.match(server.stderr, /EADDRINUSE/)
    assert.ok(logRecords(server).some((record) => record.msg === 'worker exited' && record.code === 1))
    // the bound is the behaviour: the primary gives up at once instead of restarting workers every second
    // (RESTART_DELAY_MS) for ever; it exits within a second or two, so 10 s is room for a loaded machine
    assert.ok(exitMs < 10_000, `the primary took ${exitMs.toFixed(0)} ms to give up`)
    const workers = new Set(logRecords(server).map((record) => Number(record.worker)).filter((pid) => pid > 0))
    assert.deepEqual([...workers].filter(processExists), [], 'a worker outlived the primary')
    t.diagnostic(`exit ${String(exit.code)} after ${exitMs.toFixed(0)} ms`)
  })

  for (const taken of ['PORT', 'METRICS_PORT'] as const) {
    test(`When ${taken} is taken on a fresh store, then the primary exits 1 and still prints the key it created, once, as a single process does`, async (t) => {
      noteStaleBuild(t)
      const servers = serverProcesses(t, { entry: 'build' })
      const port = await occupyPort(t)
      const databaseUrl = `sqlite:${join(await tempDir(t), 'petstore.db')}`

      const server = await servers.spawn({ DATABASE_URL: databaseUrl, WORKERS: String(WORKERS), [taken]: String(port) })
      const exit = await within(15_000, 'the primary kept running', server.exited)

      assert.deepEqual(exit, { code: 1, signal: null }, `stderr:\n${server.stderr}`)
      assert.match(server.stderr, new RegExp(`EADDRINUSE.*:${port}\\b`))
      // the key is stored already, and no later start would show it
      assert.equal(Number((await execSql(databaseUrl, 'SELECT COUNT(*) AS n FROM api_keys'))[0]?.n), 1)
      assert.equal(new Set(server.stdout.match(KEY)).size, 1, `the stored key was never shown; stdout:\n${server.stdout}`)
      assert.equal(server.stdout.match(BANNER)?.length, 1)
    })
  }
})

describe('WORKERS: configuration', () => {
  test('When WORKERS is 0, 65 or abc, or 2 with DATABASE_URL=sqlite::memory:, then the process exits 1 with one stderr line naming WORKERS', async (t) => {
    noteStaleBuild(t)
    const servers = serverProcesses(t, { entry: 'build' })
    const file = `sqlite:${join(await tempDir(t), 'petstore.db')}`
    const cases = [
      { WORKERS: '0', DATABASE_URL: file },
      { WORKERS: '65', DATABASE_URL: file },
      { WORKERS: 'abc', DATABASE_URL: file },
      { WORKERS: '2', DATABASE_URL: 'sqlite::memory:' }
    ]

    const results = await Promise.all(cases.map(async (env) => {
      const server = await servers.spawn(env)
      return { env, server, exit: await server.waitForExit(15_000) }
    }))

    for (const { env, server, exit } of results) {
      assert.deepEqual(exit, { code: 1, signal: null }, JSON.stringify(env))
      const lines = server.stderr.trimEnd().split('\n')
      assert.equal(lines.length, 1, `${JSON.stringify(env)}: expected one line, got:\n${server.stderr}`)
      assert.match(lines[0] ?? '', /^petstore: configuration error: WORKERS /)
      assert.equal(server.stdout, '')
    }
    assert.match(results[3]?.server.stderr ?? '', /sqlite::memory:/)
  })
})
