import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, copyFile, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { bearer, listAllPetsOver, sleep, strongApiKey } from '../helpers/live-server.js'
import { childEnv, runCli, serverProcesses } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'

/** How long 4 writers get to have 200 creates acknowledged (a second or two here; a hang, not a speed, fails it). */
const ACKNOWLEDGED_WITHIN_MS = 60_000

/** The ids of the pets in a SQLite file, and its integrity verdict, read directly. */
function readBackup (file: string): { ids: Set<number>, integrity: string } {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const ids = new Set((db.prepare('SELECT id FROM pets').all() as Array<{ id: number }>).map((row) => row.id))
    return { ids, integrity: String(db.pragma('integrity_check', { simple: true })) }
  } finally {
    db.close()
  }
}

describe('backup and restore (sqlite)', () => {
  test('When pets are created throughout a backup, then it holds every pet acknowledged before it began, passes integrity_check, and restores them', async (t) => {
    const servers = serverProcesses(t)
    const dir = await tempDir(t)
    const apiKey = strongApiKey()
    const env = { DATA_DIR: dir, PETSTORE_API_KEYS: apiKey, RATE_LIMIT_MAX: '0' }
    const server = await servers.start(env)
    const cliEnv = childEnv({ DATA_DIR: dir, LOG_LEVEL: 'silent' })
    const acknowledged: number[] = []
    const creating = new AbortController()
    const createPets = async (): Promise<void> => {
      while (!creating.signal.aborted) {
        const res = await fetch(`${server.baseUrl}/v1/pets`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Rex', categoryId: 1 })
        })
        assert.equal(res.status, 201)
        acknowledged.push((await res.json() as { id: number }).id)
      }
    }
    const writers = Array.from({ length: 4 }, createPets)
    // a deadline of its own: a server that stops acknowledging fails here, named, not at the run's limit
    const acknowledging = Date.now() + ACKNOWLEDGED_WITHIN_MS
    while (acknowledged.length < 200) {
      if (Date.now() > acknowledging) {
        creating.abort()
        assert.fail(`only ${acknowledged.length} creates were acknowledged within ${ACKNOWLEDGED_WITHIN_MS / 1000} s, not the 200 to take the backup among`)
      }
      await sleep(10)
    }

    const before = [...acknowledged]
    const backupFile = join(dir, 'backups', 'petstore-backup.db')
    const backup = await runCli(['backup', backupFile], cliEnv)
    const createdDuringBackup = acknowledged.length - before.length
    creating.abort()
    await Promise.all(writers)

    assert.equal(backup.code, 0, backup.stderr)
    assert.match(backup.stdout, /integrity_check: ok/)
    assert.ok(createdDuringBackup > 0, 'no create was acknowledged while the backup ran: the test proves nothing')
    const saved = readBackup(backupFile)
    assert.equal(saved.integrity, 'ok')
    const missing = before.filter((id) => !saved.ids.has(id))
    assert.deepEqual(missing, [], `${missing.length} pets acknowledged before the backup began are not in it`)
    assert.deepEqual((await readdir(join(dir, 'backups'))), ['petstore-backup.db'], 'a partial file was left beside the backup')

    const refused = await runCli(['restore', backupFile], cliEnv)
    assert.equal(refused.code, 1, refused.stdout)
    assert.match(refused.stderr, /open in another process/)
    assert.equal((await listAllPetsOver(server.baseUrl, apiKey)).length, acknowledged.length, 'a refused restore changed the database')

    assert.equal((await server.stop()).code, 0)
    const restored = await runCli(['restore', backupFile], cliEnv)
    assert.equal(restored.code, 0, restored.stderr)
    const keptAs = /kept as (\S+)$/m.exec(restored.stdout)?.[1]
    assert.ok(keptAs !== undefined && existsSync(keptAs), `the replaced database was not kept: ${restored.stdout}`)
    assert.equal(readBackup(keptAs).ids.size, acknowledged.length)

    const again = await servers.start(env)
    const pets = await listAllPetsOver(again.baseUrl, apiKey)
    assert.deepEqual(new Set(pets.map((pet) => pet.id)), saved.ids)
  })

  test('When an older backup is restored and the service goes on, then new events, pets, orders, webhook endpoints and webhook messages get ids above every id the replaced database issued', async (t) => {
    const servers = serverProcesses(t)
    const receiver = await webhookReceiver(t)
    const dir = await tempDir(t)
    const apiKey = strongApiKey()
    const env = { DATA_DIR: dir, PETSTORE_API_KEYS: apiKey, RATE_LIMIT_MAX: '0', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }
    const cliEnv = childEnv({ ...env, LOG_LEVEL: 'silent' })
    const addEndpoint = async (url: string, events: string[] = []): Promise<number> => {
      const added = await runCli(['webhooks', 'add', url, '--json', ...(events.length === 0 ? [] : ['--events', events.join(',')])], cliEnv)
      assert.equal(added.code, 0, added.stderr)
      return (JSON.parse(added.stdout) as { endpoint: { id: number } }).endpoint.id
    }
    await addEndpoint(receiver.url)
    let server = await servers.start(env)
    const create = async (name: string): Promise<number> => await createPetOver(server.baseUrl, apiKey, name)
    const feed = async (): Promise<Array<{ id: number, data: { name?: string } }>> => {
      const res = await fetch(`${server.baseUrl}/v1/events?after=0&limit=100`, { headers: bearer(apiKey) })
      assert.equal(res.status, 200)
      return await res.json() as Array<{ id: number, data: { name?: string } }>
    }
    await create('in the backup 1')
    await create('in the backup 2')
    const backupFile = join(dir, 'older.db')
    assert.equal((await runCli(['backup', backupFile], cliEnv)).code, 0)
    for (const name of ['lost 3', 'lost 4']) await create(name)
    // an order (pet.updated and order.created) and an endpoint the restore loses; the endpoint is sent
    // nothing here (no order changes status), so the receiver counts the first endpoint's messages only
    const lostOrderId = await placeOrderOver(server.baseUrl, apiKey, await create('lost 5'))
    const lostEndpointId = await addEndpoint(`${receiver.url}/lost`, ['order.updated'])
    await receiver.waitFor(7)
    const issuedBefore = (await feed()).map((event) => event.id)
    assert.equal((await server.stop()).code, 0)

    const restored = await runCli(['restore', backupFile], cliEnv)
    assert.equal(restored.code, 0, restored.stderr)
    assert.match(restored.stdout, new RegExp(`event ids continue after ${Math.max(...issuedBefore)}\\)`))
    server = await servers.start(env)
    const petId = await create('after the restore')
    const orderId = await placeOrderOver(server.baseUrl, apiKey, petId)
    const endpointId = await addEndpoint(`${receiver.url}/after`, ['order.updated'])
    await receiver.waitFor(10)

    const events = await feed()
    const after = events.filter((event) => !issuedBefore.includes(event.id)).map((event) => event.id)
    assert.equal(after.length, 3, `the feed: ${JSON.stringify(events)}`)
    assert.ok(Math.min(...after) > Math.max(...issuedBefore), `the new events have ids ${after.join(', ')}, not all above ${Math.max(...issuedBefore)}`)
    assert.ok(petId > 5, `the new pet got id ${petId}, an id the replaced database had issued`)
    assert.ok(orderId > lostOrderId, `the new order got id ${orderId}, not above the lost order's ${lostOrderId}`)
    assert.ok(endpointId > lostEndpointId, `the new webhook endpoint got id ${endpointId}, not above the lost endpoint's ${lostEndpointId}`)
    assertOneEventPerWebhookId(receiver.received)
  })

  test('When a backup taken while a webhook request was in flight is restored, then the endpoint is not held by the stopped process: deliveries resume at once, the unrecorded one sent again under its webhook-id', async (t) => {
    const servers = serverProcesses(t)
    const receiver = await webhookReceiver(t)
    const dir = await tempDir(t)
    const apiKey = strongApiKey()
    const env = { DATA_DIR: dir, PETSTORE_API_KEYS: apiKey, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }
    const cliEnv = childEnv({ ...env, LOG_LEVEL: 'silent' })
    assert.equal((await runCli(['webhooks', 'add', receiver.url], cliEnv)).code, 0)
    // the first request is held open past the backup: the backup holds the endpoint's lease (2 × 10 s + 5 s)
    receiver.answer((_request, index) => index === 0 ? { status: 204, afterMs: 5_000 } : 204)
    let server = await servers.start(env)
    const create = async (name: string): Promise<number> => await createPetOver(server.baseUrl, apiKey, name)
    await create('delivered while the backup is taken')
    await receiver.waitFor(1)
    const backupFile = join(dir, 'mid-delivery.db')
    assert.equal((await runCli(['backup', backupFile], cliEnv)).code, 0)
    assert.equal((await server.stop()).code, 0)
    assert.equal((await runCli(['restore', backupFile], cliEnv)).code, 0)

    server = await servers.start(env)
    const restarted = Date.now()
    await create('after the restore')
    // well inside the 25 s the backed-up lease would have held the endpoint
    const [first, again, next] = await receiver.waitFor(3, 10_000)
    assert.equal(again?.headers['webhook-id'], first?.headers['webhook-id'], 'the delivery in flight at the backup was not sent again first')
    assert.notEqual(next?.headers['webhook-id'], first?.headers['webhook-id'])
    assert.ok((next?.at ?? Infinity) - restarted < 10_000)
    assertOneEventPerWebhookId(receiver.received)
  })

  test('When a backup taken while an Idempotency-Key create was in flight is restored, then the key is free again: a retry creates the pet at once instead of 409', async (t) => {
    const servers = serverProcesses(t)
    const dir = await tempDir(t)
    const apiKey = strongApiKey()
    const env = { DATA_DIR: dir, PETSTORE_API_KEYS: apiKey }
    const cliEnv = childEnv({ ...env, LOG_LEVEL: 'silent' })
    let server = await servers.start(env)
    const body = JSON.stringify({ name: 'retried after the restore', categoryId: 1 })
    const create = async (): Promise<Response> => await fetch(`${server.baseUrl}/v1/pets`,
      { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json', 'idempotency-key': 'restore-retry-1' }, body })
    const before = await create()
    assert.equal(before.status, 201)
    const backupFile = join(dir, 'mid-create.db')
    assert.equal((await runCli(['backup', backupFile], cliEnv)).code, 0)
    assert.equal((await server.stop()).code, 0)
    // a create cannot be held open between its claim and its commit; the backup is made to hold what a
    // backup taken at that moment holds: the key claimed for a minute, no response, no pet
    const db = new Database(backupFile, { fileMustExist: true })
    try {
      db.prepare("UPDATE idempotency_keys SET token = 'held-by-the-stopped-process', locked_until = ?, response_status = NULL, response_body = NULL")
        .run(Date.now() + 60_000)
      db.prepare('DELETE FROM pets').run()
    } finally {
      db.close()
    }
    assert.equal((await runCli(['restore', backupFile], cliEnv)).code, 0)

    server = await servers.start(env)
    const retried = await create()
    assert.equal(retried.status, 201, await retried.clone().text())
    assert.equal((await retried.json() as { name: string }).name, 'retried after the restore')
    assert.equal((await create()).status, 201, 'the retry was not recorded under its key')
    assert.equal((await listAllPetsOver(server.baseUrl, apiKey)).length, 1)
  })

  test('When the file to restore is not a petstore database, then restore exits 1 and the database is left alone', async (t) => {
    const dir = await tempDir(t)
    const env = childEnv({ DATA_DIR: dir, LOG_LEVEL: 'silent' })
    assert.equal((await runCli(['migrate'], env)).code, 0)
    await writeFile(join(dir, 'junk.db'), 'not a database')

    const result = await runCli(['restore', join(dir, 'junk.db')], env)

    assert.equal(result.code, 1)
    assert.match(result.stderr, /nothing was changed/)
    assert.deepEqual((await readdir(dir)).filter((name) => name.includes('before-restore') || name.includes('restoring')), [])
  })
})

/** POSTs a pet named `name` to the server at `baseUrl`; asserts 201 and answers its id. */
async function createPetOver (baseUrl: string, apiKey: string, name: string): Promise<number> {
  const res = await fetch(`${baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) })
  assert.equal(res.status, 201)
  return (await res.json() as { id: number }).id
}

/** POSTs an order for `petId` to the server at `baseUrl`; asserts 201 and answers its id. */
async function placeOrderOver (baseUrl: string, apiKey: string, petId: number): Promise<number> {
  const res = await fetch(`${baseUrl}/v1/store/orders`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ petId }) })
  assert.equal(res.status, 201, await res.clone().text())
  return (await res.json() as { id: number }).id
}

/** Fails when one `webhook-id` came with two different bodies: a receiver deduplicating by it would drop an event. */
function assertOneEventPerWebhookId (received: ReadonlyArray<{ headers: Record<string, unknown>, body: string }>): void {
  const bodies = new Map<string, Set<string>>()
  for (const request of received) {
    const id = String(request.headers['webhook-id'])
    bodies.set(id, (bodies.get(id) ?? new Set()).add(request.body))
  }
  const reused = [...bodies].filter(([, seen]) => seen.size > 1).map(([id]) => id)
  assert.deepEqual(reused, [], `a webhook-id named two different events: ${reused.join(', ')}`)
}

/** The permission bits of `path`, as `0o600`. */
async function modeOf (path: string): Promise<string> {
  return `0o${((await stat(path)).mode & 0o777).toString(8)}`
}

describe('file modes of the SQLite store (sqlite)', () => {
  test('When a server starts on a new DATA_DIR, a backup is taken and restored, then the directories are 0700 and the database, its WAL, the backup and the restored file 0600', async (t) => {
    const dir = await tempDir(t)
    const data = join(dir, 'data')
    const env = { DATA_DIR: data, PETSTORE_API_KEYS: strongApiKey() }
    const cliEnv = childEnv({ DATA_DIR: data, LOG_LEVEL: 'silent' })
    const servers = serverProcesses(t)
    const server = await servers.start(env)

    const backupFile = join(dir, 'backups', 'petstore-backup.db')
    const backup = await runCli(['backup', backupFile], cliEnv)

    assert.equal(backup.code, 0, backup.stderr)
    assert.deepEqual((await readdir(data)).sort(), ['petstore.db', 'petstore.db-shm', 'petstore.db-wal'])
    const modes = Object.fromEntries(await Promise.all([data, join(dir, 'backups'), ...(await readdir(data)).map((name) => join(data, name)), backupFile]
      .map(async (path) => [path.slice(dir.length + 1), await modeOf(path)])))
    assert.deepEqual(modes, {
      data: '0o700',
      backups: '0o700',
      'data/petstore.db': '0o600',
      'data/petstore.db-shm': '0o600',
      'data/petstore.db-wal': '0o600',
      'backups/petstore-backup.db': '0o600'
    })

    // a backup copied elsewhere with the umask's mode, restored: the database is the service's user's alone again
    assert.equal((await server.stop()).code, 0)
    const copied = join(dir, 'copied.db')
    await copyFile(backupFile, copied)
    await chmod(copied, 0o644)
    const restored = await runCli(['restore', copied], cliEnv)
    assert.equal(restored.code, 0, restored.stderr)
    assert.equal(await modeOf(join(data, 'petstore.db')), '0o600')
  })
})

describe('backup and restore (PostgreSQL)', () => {
  for (const command of ['backup', 'restore']) {
    test(`When ${command} is asked of a PostgreSQL store, then it exits 2 and points at pg_dump and PITR`, async () => {
      const result = await runCli([command, '/tmp/never-written.db'], childEnv({ DATABASE_URL: 'postgres://petstore@127.0.0.1:1/petstore', LOG_LEVEL: 'silent' }))

      assert.equal(result.code, 2)
      assert.match(result.stderr, /pg_dump/)
      assert.match(result.stderr, /PITR/)
    })
  }
})
