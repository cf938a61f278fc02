import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { tempDir } from '../helpers/build-app.js'
import { execSql, freshDatabaseUrl, requiresPostgres, testStores } from '../helpers/databases.js'
import { openSocket, readResponse, serverProcesses, within } from '../helpers/processes.js'

const KEY = /petstore_[A-Za-z0-9_-]{43}/g
const CURL_EXAMPLE = /^ *curl -H 'Authorization: Bearer (petstore_[A-Za-z0-9_-]{43})' (http:\/\/\S+\/v1\/pets)$/m

function bearer (key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}

function environmentKey (): string {
  return `env-${randomBytes(24).toString('base64url')}`
}

async function countApiKeys (databaseUrl: string): Promise<number> {
  return Number((await execSql(databaseUrl, 'SELECT COUNT(*) AS n FROM api_keys'))[0]?.n)
}

async function createPet (baseUrl: string, key: string, pet: Record<string, unknown>): Promise<Response> {
  return fetch(`${baseUrl}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(pet)
  })
}

for (const store of testStores()) {
  describe(`server process (${store})`, () => {
    describe('bootstrap key', () => {
      test('When the first start finds no key anywhere, then it prints one key with a one-line curl example, and that key works', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)

        const server = await servers.start({ DATABASE_URL: databaseUrl })
        const [, curlKey, curlUrl] = await server.waitForStdout(CURL_EXAMPLE)

        const printed = new Set(server.stdout.match(KEY))
        assert.equal(printed.size, 1, `expected exactly one key, got:\n${server.stdout}`)
        assert.ok(curlKey !== undefined && printed.has(curlKey))
        assert.equal(curlUrl, `${server.baseUrl}/v1/pets`)
        assert.doesNotMatch(server.stderr, KEY)
        const res = await fetch(curlUrl, { headers: bearer(curlKey) })
        assert.equal(res.status, 200)
        assert.deepEqual(await res.json(), [])
        assert.deepEqual(await execSql(databaseUrl, 'SELECT name, role FROM api_keys'), [{ name: 'bootstrap', role: 'admin' }], 'the first key is the operator\'s: every operation')
      })

      test('When the first start prints its key, then the banner comes after the "Server listening" and "petstore ready" lines, on every store', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)

        const server = await servers.start({ DATABASE_URL: databaseUrl })
        await server.waitForStdout(/Manage keys with/)

        const lines = server.stdout.split('\n')
        const banner = lines.findIndex((line) => line.startsWith('No API key existed'))
        const listening = lines.findIndex((line) => line.includes('"msg":"Server listening at'))
        const ready = lines.findIndex((line) => line.includes('"msg":"petstore ready"'))
        assert.ok(listening !== -1 && ready !== -1 && banner !== -1, server.stdout)
        assert.ok(listening < banner && ready < banner, `the banner should follow the start-up lines:\n${server.stdout}`)
      })

      test('When the server starts again on the same database, then it prints no new key and the first one still works', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const first = await servers.start({ DATABASE_URL: databaseUrl })
        const [, key = ''] = await first.waitForStdout(CURL_EXAMPLE)
        assert.equal((await first.stop()).code, 0)

        const second = await servers.start({ DATABASE_URL: databaseUrl })
        const res = await fetch(`${second.baseUrl}/v1/pets`, { headers: bearer(key) })
        const exit = await second.stop()

        assert.equal(res.status, 200)
        assert.equal(exit.code, 0)
        assert.doesNotMatch(second.stdout, KEY)
        assert.doesNotMatch(second.stdout, /curl/)
        assert.equal(await countApiKeys(databaseUrl), 1)
      })

      test('When every key was revoked, then a restart mints no new key', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const first = await servers.start({ DATABASE_URL: databaseUrl })
        const [, key = ''] = await first.waitForStdout(CURL_EXAMPLE)
        assert.equal((await first.stop()).code, 0)
        await execSql(databaseUrl, 'UPDATE api_keys SET revoked_at = $1', [new Date().toISOString()])

        const second = await servers.start({ DATABASE_URL: databaseUrl })
        const res = await fetch(`${second.baseUrl}/v1/pets`, { headers: bearer(key) })
        const exit = await second.stop()

        assert.equal(res.status, 401)
        assert.equal(exit.code, 0)
        assert.doesNotMatch(second.stdout, KEY)
        assert.equal(await countApiKeys(databaseUrl), 1)
      })

      for (const variable of ['PETSTORE_API_KEYS', 'PETSTORE_ADMIN_API_KEYS'] as const) {
        test(`When ${variable} is set on a fresh database, then no key is created and the environment key works`, async (t) => {
          const servers = serverProcesses(t)
          const databaseUrl = await freshDatabaseUrl(t, store)
          const key = environmentKey()

          const server = await servers.start({ DATABASE_URL: databaseUrl, [variable]: key })
          const res = await createPet(server.baseUrl, key, { name: 'Rex', categoryId: 1 })
          const exit = await server.stop()

          assert.equal(res.status, 201)
          assert.equal(exit.code, 0)
          assert.doesNotMatch(server.stdout, KEY)
          assert.equal(await countApiKeys(databaseUrl), 0)
        })
      }
    })

    describe('shutdown and restart', () => {
      test('When SIGTERM arrives during a request, then that request gets its full 201, new connections are refused and the process exits 0', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const key = environmentKey()
        // debug: the "incoming request" line says when the request has reached the server
        const server = await servers.start({ DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: key, LOG_LEVEL: 'debug' })
        const body = JSON.stringify({ name: 'Slow Sender 01', categoryId: 7 })
        assert.equal(Buffer.byteLength(body), 40)
        const socket = await openSocket(server.port)
        t.after(() => { socket.destroy() })
        const response = readResponse(socket)
        socket.write(`POST /v1/pets HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: Bearer ${key}\r\n` +
        'content-type: application/json\r\ncontent-length: 40\r\n\r\n' + body.slice(0, 15))
        await server.waitForStdout(/"incoming request".*"url":"\/v1\/pets"|"url":"\/v1\/pets".*"incoming request"/)

        server.child.kill('SIGTERM')
        await server.waitForStdout(/shutting down/)
        const refused = await refusedWithin(server.port, 5_000)
        socket.write(body.slice(15))
        const answer = await response
        const exit = await server.waitForExit(10_000)

        assert.equal(refused, true, 'a new connection was still accepted after SIGTERM')
        assert.equal(answer.status, 201)
        assert.match(answer.headers['content-type'] ?? '', /^application\/json/)
        const pet = JSON.parse(answer.body) as Record<string, unknown>
        assert.deepEqual({ ...pet, id: undefined }, { id: undefined, name: 'Slow Sender 01', categoryId: 7, status: 'available' })
        assert.equal(answer.headers.location, `/v1/pets/${String(pet.id)}`)
        assert.deepEqual(exit, { code: 0, signal: null })
      })

      test('When the server answers requests, then their access lines reach stdout while it runs, not only once a batch fills or it exits, and every one of them by the time SIGTERM has stopped it', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const key = environmentKey()
        const server = await servers.start({ DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: key })
        // the lines of this test's requests (start-up's readiness checks have theirs too)
        const accessLines = (): number => server.stdout.split('\n').filter((line) => line.includes('"msg":"request completed"') && line.includes('"url":"/v1/pets')).length

        assert.equal((await fetch(`${server.baseUrl}/v1/pets`, { headers: bearer(key) })).status, 200)
        // one line, far from a 4 KiB batch, comes on the batch's timer (LOG_FLUSH_INTERVAL_MS) or never while the
        // server runs and is sent nothing: the wait's deadline (15 s) fails that as a hang; how long a line waits is the timer's
        await server.waitForStdout(/"url":"\/v1\/pets".*"msg":"request completed"/)
        for (let i = 0; i < 40; i++) assert.equal((await fetch(`${server.baseUrl}/v1/pets?limit=${1 + (i % 20)}`, { headers: bearer(key) })).status, 200)
        assert.equal((await server.stop()).code, 0)

        assert.equal(accessLines(), 41)
      })

      test('When pets were created before a restart, then they are there after it', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const key = environmentKey()
        const env = { DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: key }
        const first = await servers.start(env)
        const created = await createPet(first.baseUrl, key, { name: 'Rex', categoryId: 3, status: 'pending' })
        assert.equal(created.status, 201)
        const pet = await created.json() as { id: number }
        assert.equal((await first.stop()).code, 0)

        const second = await servers.start(env)
        const res = await fetch(`${second.baseUrl}/v1/pets/${pet.id}`, { headers: bearer(key) })

        assert.equal(res.status, 200)
        assert.deepEqual(await res.json(), pet)
      })
    })
  })
}

describe('server process: configuration', () => {
  test('When PORT is not a number, then the process exits 1 with a single stderr line naming PORT', async (t) => {
    const servers = serverProcesses(t)
    const databaseUrl = `sqlite:${join(await tempDir(t), 'petstore.db')}`

    const server = await servers.spawn({ DATABASE_URL: databaseUrl, PORT: 'abc' })
    const exit = await server.waitForExit(15_000)

    assert.equal(exit.code, 1)
    const lines = server.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 1, `expected one line, got:\n${server.stderr}`)
    assert.match(lines[0] ?? '', /\bPORT\b/)
    assert.doesNotMatch(server.stdout, KEY)
  })
})

describe('server process: PostgreSQL at start-up', () => {
  test('When PostgreSQL cannot be reached at start, then the process exits 1 with one line naming the database', async (t) => {
    const servers = serverProcesses(t)

    // port 1 on loopback: nothing listens, so the connection is refused at once
    const server = await servers.spawn({ DATABASE_URL: 'postgres://petstore:s3cret@127.0.0.1:1/petstore', DATABASE_TIMEOUT_MS: '1000' })
    const exit = await server.waitForExit(15_000)

    assert.equal(exit.code, 1)
    const lines = server.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 1, `expected one line, got:\n${server.stderr}`)
    assert.match(lines[0] ?? '', /could not start: postgres:\/\/petstore@127\.0\.0\.1:1\/petstore: PostgreSQL is unreachable \(ECONNREFUSED\)/)
    assert.doesNotMatch(server.stdout + server.stderr, /s3cret/)
  })
})

describe('server process: several instances (postgres)', requiresPostgres(), () => {
  test('When two servers start at once on one empty PostgreSQL schema, then exactly one key is created and printed, and it works on both', async (t) => {
    const servers = serverProcesses(t)
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')

    const started = await Promise.all([servers.start({ DATABASE_URL: databaseUrl }), servers.start({ DATABASE_URL: databaseUrl })])
    await Promise.any(started.map(async (server) => server.waitForStdout(CURL_EXAMPLE)))
    // the key goes out right after listening: give a second, wrong, key time to show up too
    await new Promise((resolve) => setTimeout(resolve, 300))

    const printed = started.flatMap((server) => server.stdout.match(KEY) ?? [])
    assert.equal(new Set(printed).size, 1, `expected one key across both servers, got ${printed.length}`)
    assert.equal(await countApiKeys(databaseUrl), 1)
    for (const server of started) {
      const res = await fetch(`${server.baseUrl}/v1/pets`, { headers: bearer(printed[0] ?? '') })
      assert.equal(res.status, 200)
    }
  })
})

/** Tries new connections until one is refused; false when every attempt for `ms` was accepted. */
async function refusedWithin (port: number, ms: number): Promise<boolean> {
  return within(ms + 1_000, 'connection attempts hung', (async () => {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      try {
        const socket = await openSocket(port)
        socket.destroy()
      } catch (error) {
        // a connect racing the listener's close is reset rather than refused: not served either way
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ECONNREFUSED' || code === 'ECONNRESET') return true
        throw error
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return false
  })())
}
