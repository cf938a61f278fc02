import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { Database } from '../../../src/infra/database/sqlite/driver.js'
import { loadConfig, SQLITE_BUSY_TIMEOUT_MS } from '../../../src/infra/config/config.js'
import { openDatabase } from '../../../src/infra/database/open-database.js'
import { createPetStore } from '../../../src/capabilities/pets/store/create-pet-store.js'
import { systemClock } from '../../../src/infra/runtime/clock.js'
import { openSqliteDatabase } from '../../../src/infra/database/sqlite/connection.js'
import { SQL } from '../../../src/capabilities/pets/store/sqlite-sql.js'
import { migrateSqlite } from '../../../src/infra/database/sqlite/migrations.js'
import { tempDir } from '../../helpers/build-app.js'

describe('SQLite database', () => {
  test('When a file store is opened, then writes are durable: WAL with synchronous=FULL', async (t) => {
    const path = join(await tempDir(t), 'pets.db')
    const { database } = await openDatabase(loadConfig({ DATABASE_URL: `sqlite:${path}` }).database)
    t.after(() => database.close())
    assert.equal(database.kind, 'sqlite')

    const db = new Database(path, { readonly: true })
    t.after(() => db.close())
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
    // synchronous is per connection: asked of the very connection every store of the app writes through
    assert.equal(['off', 'normal', 'full', 'extra'][database.connection.pragma('synchronous', { simple: true }) as number], 'full')
    assert.equal(database.connection.pragma('busy_timeout', { simple: true }), SQLITE_BUSY_TIMEOUT_MS)
  })

  test('When writes run without waiting for the disk (the webhook queue\'s), then they run at synchronous=NORMAL and the connection is back to FULL after them, also after a failure', async (t) => {
    const { database } = await openDatabase(loadConfig({ DATABASE_URL: `sqlite:${join(await tempDir(t), 'pets.db')}` }).database)
    t.after(() => database.close())
    if (database.kind !== 'sqlite') throw new Error('not a SQLite database')
    const synchronous = (): unknown => database.connection.pragma('synchronous', { simple: true })

    assert.equal(database.runWithoutFsync(synchronous), 1, 'NORMAL inside')
    assert.equal(synchronous(), 2, 'FULL after')
    assert.throws(() => database.runWithoutFsync(() => database.connection.exec('INSERT INTO no_such_table VALUES (1)')))
    assert.equal(synchronous(), 2, 'FULL after a failure')
  })

  test('When the directory of the file does not exist, then it is created', async (t) => {
    const path = join(await tempDir(t), 'nested', 'deeper', 'pets.db')

    const { database } = await openDatabase({ kind: 'sqlite', path })
    t.after(() => database.close())

    assert.deepEqual((await createPetStore(database, systemClock).listPets({ limit: 5 })).pets, [])
  })

  test('When the list query runs, then SQLite walks the (status, id) index or the primary key, never a sort', async (t) => {
    const db = openSqliteDatabase({ memory: true })
    t.after(() => db.close())
    migrateSqlite(db)
    const explain = (sql: string, ...args: unknown[]): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((row) => row.detail).join('; ')

    const filtered = explain(SQL.listPetsByStatus, 'available', 0, 21)
    const unfiltered = explain(SQL.listPets, 0, 21)

    assert.match(filtered, /SEARCH pets USING INDEX pets_status_id \(status=\? AND id>\?\)/)
    assert.match(unfiltered, /SEARCH pets USING INTEGER PRIMARY KEY \(rowid>\?\)/)
    assert.doesNotMatch(`${filtered}; ${unfiltered}`, /TEMP B-TREE/)
  })
})
