import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test, type TestContext } from 'node:test'
import { loadConfig } from '../../../src/infra/config/config.js'
import { openDatabase } from '../../../src/infra/database/open-database.js'
import { openStores, type OpenedStores } from '../../helpers/stores.js'
import pg from 'pg'
import { StoreUnavailableError } from '../../../src/infra/errors/catalogue.js'
import { toStoreError } from '../../../src/infra/database/postgres/errors.js'
import { serverStatementTimeout } from '../../../src/infra/database/postgres/postgres-database.js'
import { parseInt8 } from '../../../src/infra/database/postgres/int8.js'
import { execSql, freshDatabaseUrl, requiresPostgres, testDatabaseUrl, withPostgres, withSearchPath } from '../../helpers/databases.js'
import { buildTestApp, postPet } from '../../helpers/build-app.js'
import { assertError } from '../../helpers/assertions.js'
import { startTcpProxy } from '../../helpers/tcp-proxy.js'
import { EVENTS_RECORDED_CHANNEL } from '../../../src/infra/database/commit-signal.js'
import { PETS_CHANGED_CHANNEL } from '../../../src/capabilities/pets/store/postgres-sql.js'

async function openOn (t: TestContext, databaseUrl: string): Promise<OpenedStores> {
  return await openStores(t, 'postgres', databaseUrl)
}

/** Polls `done` until it is true; fails the test after 10 s (a bound on a hang, not a speed asserted). */
async function until (what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!done()) {
    assert.ok(Date.now() < deadline, `${what}: not within 10 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('PostgreSQL values and errors, mapped without a server', () => {
  test('When the client waits DATABASE_TIMEOUT_MS for a query, then the server is told to end a statement sooner: a tenth, at least 100 ms, never below half', () => {
    assert.deepEqual([100, 500, 2000, 60_000].map(serverStatementTimeout), [50, 400, 1800, 54_000])
  })

  test('When int8 text is parsed, then it is a number only when exactly representable, else a bigint', () => {
    assert.equal(parseInt8('9007199254740991'), Number.MAX_SAFE_INTEGER)
    assert.equal(parseInt8('-9007199254740991'), -Number.MAX_SAFE_INTEGER)
    assert.equal(parseInt8('0'), 0)
    assert.equal(parseInt8('9007199254740992'), 9007199254740992n)
    assert.equal(parseInt8('-9223372036854775808'), -9223372036854775808n)
  })

  test('When a failure is the database\'s or the network\'s, then it becomes a StoreUnavailableError; other errors pass through', () => {
    const databaseError = (code: string): pg.DatabaseError => Object.assign(new pg.DatabaseError('failure', 0, 'error'), { code })
    const unavailable = [
      Object.assign(new Error('getaddrinfo EAI_AGAIN db.internal'), { code: 'EAI_AGAIN' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new Error('Connection terminated unexpectedly'),
      databaseError('57P01'), // admin shutdown
      databaseError('57014'), // statement timeout
      databaseError('53300'), // too many connections
      databaseError('08006'), // connection failure
      databaseError('40001'), // serialization failure
      databaseError('25006') // read-only transaction: a primary turned standby
    ]
    for (const error of unavailable) assert.ok(toStoreError(error) instanceof StoreUnavailableError, `${String((error as { code?: string }).code ?? error.message)} should be retryable`)

    const bugs = [databaseError('23505'), databaseError('42P01'), databaseError('22P02'), new TypeError('x is undefined')]
    for (const error of bugs) assert.equal(toStoreError(error), error)
  })
})

describe('PostgreSQL database (postgres)', requiresPostgres(), () => {
  test('When the database turns read-only under a running app (failover), then a create answers 503, not 500', async (t) => {
    const api = await buildTestApp(t, { store: 'postgres' })
    // what a standby answers to a write, raised by a trigger so that only this schema is affected
    await execSql(api.databaseUrl, `CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'cannot execute INSERT in a read-only transaction' USING ERRCODE = '25006'; END $$`)
    await execSql(api.databaseUrl, 'CREATE TRIGGER read_only BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION refuse_write()')

    const res = await postPet(api, { name: 'Rex', categoryId: 1 })

    assertError(res, 'service_unavailable')
    assert.equal(res.headers['retry-after'], '1')
  })

  test('When the database is not UTF8, then opening it is refused with a message saying so', async (t) => {
    // a database of its own: test files run concurrently, and other checkouts may share the server
    const name = `petstore_latin1_${randomBytes(6).toString('hex')}`
    await withPostgres((client) => client.query(`CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`))
    t.after(() => withPostgres((client) => client.query(`DROP DATABASE IF EXISTS ${name}`)))
    const url = new URL(testDatabaseUrl())
    url.pathname = `/${name}`

    await assert.rejects(openDatabase(loadConfig({ DATABASE_URL: url.toString() }).database), /database encoding is LATIN1; petstore needs a UTF8 database/)
  })

  test('When the schema is created, then the ids the store draws are int8 identities that stop at 2^53 - 1, and a category\'s id is the int64 its client chose', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    await openOn(t, databaseUrl)

    const columns = await execSql(databaseUrl,
      "SELECT table_name, data_type, is_identity, identity_generation, identity_maximum FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'id' ORDER BY table_name")

    const drawn = (table: string): Record<string, string | null> => ({
      table_name: table, data_type: 'bigint', is_identity: 'YES', identity_generation: 'ALWAYS', identity_maximum: String(Number.MAX_SAFE_INTEGER)
    })
    // categories' ids are any int64 a pet carries, chosen by PUT /v1/categories/{categoryId}: no identity
    const chosen = { table_name: 'categories', data_type: 'bigint', is_identity: 'NO', identity_generation: null, identity_maximum: null }
    assert.deepEqual(columns, [drawn('api_keys'), chosen, ...['events', 'orders', 'pets', 'webhook_attempts', 'webhook_endpoints'].map(drawn)])
  })

  test('When the last exact id is drawn, then it is returned as that exact number', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const { pets: store } = await openOn(t, databaseUrl)
    await execSql(databaseUrl, "SELECT setval(pg_get_serial_sequence('pets', 'id'), $1)", [String(Number.MAX_SAFE_INTEGER - 1)])

    const pet = await store.createPet({ name: 'last', categoryId: 1, status: 'available' })

    assert.equal(pet.id, Number.MAX_SAFE_INTEGER)
    assert.deepEqual(await store.findPetById(Number.MAX_SAFE_INTEGER), pet)
  })

  test('When pets are created concurrently through two pools, then every listing is a prefix of the final one (ids commit in order)', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const [a, b] = [(await openOn(t, databaseUrl)).pets, (await openOn(t, databaseUrl)).pets] as const
    const writers = new AbortController()
    const seen: number[][] = []
    const reader = (async () => {
      while (!writers.signal.aborted) seen.push((await b.listPets({ limit: 1000 })).pets.map((pet) => pet.id))
    })()

    await Promise.all(Array.from({ length: 16 }, async (_, writer) => {
      for (let i = 0; i < 25; i++) await (writer % 2 === 0 ? a : b).createPet({ name: `w${writer}-${i}`, categoryId: writer, status: 'available' })
    }))
    writers.abort()
    await reader

    const final = (await a.listPets({ limit: 1000 })).pets.map((pet) => pet.id)
    assert.equal(final.length, 400)
    assert.ok(seen.length > 5, `the reader listed only ${seen.length} times`)
    for (const ids of seen) assert.deepEqual(ids, final.slice(0, ids.length), 'a pet appeared below one already listed')
  })

  test('When the pets\' list version and the webhook delivery both listen, then one connection carries both channels, and each hears only its own', async (t) => {
    const direct = new URL(await freshDatabaseUrl(t, 'postgres'))
    const proxy = await startTcpProxy(t, { host: direct.hostname, port: direct.port === '' ? 5432 : Number(direct.port) })
    const viaProxy = new URL(direct)
    viaProxy.hostname = '127.0.0.1'
    viaProxy.port = String(proxy.port)
    const { database } = await openOn(t, viaProxy.toString())
    if (database.kind !== 'postgres') throw new Error('not a PostgreSQL database')
    const opened = proxy.accepted
    // the pets' store asked for its channel when it was made (openStores); the webhook delivery subscribes to its own
    const petsChanged = database.listen(PETS_CHANGED_CHANNEL)
    let recorded = 0
    const eventsRecorded = database.listen(EVENTS_RECORDED_CHANNEL)
    eventsRecorded.subscribe(() => { recorded++ })
    await until('both channels listened on', () => petsChanged.version() !== undefined && eventsRecorded.version() !== undefined)

    const petsVersion = petsChanged.version()
    const heard = recorded
    await execSql(direct.toString(), `SELECT pg_notify('${EVENTS_RECORDED_CHANNEL}', current_schema())`)
    await until('the events notification heard', () => recorded > heard)
    assert.equal(petsChanged.version(), petsVersion, 'a notification of the events channel moved the pets\' version')
    await execSql(direct.toString(), `SELECT pg_notify('${PETS_CHANGED_CHANNEL}', current_schema())`)
    await until('the pets notification heard', () => petsChanged.version() !== petsVersion)

    assert.equal(proxy.accepted - opened, 1, 'connections opened to listen on two channels')
  })

  test('When the search_path names a schema that does not exist, then opening fails saying so', async () => {
    const url = withSearchPath(testDatabaseUrl(), 'petstore_no_such_schema')

    await assert.rejects(openDatabase(loadConfig({ DATABASE_URL: url }).database), /search_path names no schema that exists/)
  })

  test('When the store describes itself, then the description names host, database and schema but never the password', async (t) => {
    const server = new URL(testDatabaseUrl())
    const url = new URL(await freshDatabaseUrl(t, 'postgres'))
    // a server that trusts its clients ignores the password; one that checks it gets its own
    if (url.password === '') url.password = 's3cret'
    const { database: store } = await openOn(t, url.toString())

    const names = `${server.protocol}//${server.username === '' ? '' : `${server.username}@`}${server.host}${server.pathname} (schema `
    assert.ok(store.description.startsWith(names), `${store.description} does not start with ${names}`)
    assert.match(store.description.slice(names.length), /^petstore_test_[0-9a-f]+\)$/)
    assert.ok(!store.description.includes(url.password), 'the description holds the password')
  })
})
