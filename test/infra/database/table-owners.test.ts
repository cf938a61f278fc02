import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

// each table's one home (STYLE.md, "A capability changes another's table only through the owner's functions"): the
// capability it is named after, as its folder (`orders`) or as the first word of its name, that folder's name in the
// singular (`pet_counts`: pets, `bus_positions`: buses), so a new capability's tables need no line here; these are not
const NAMED_OTHERWISE: Record<string, string> = { api_keys: 'keys', settings: 'infra' }
const CAPABILITIES = readdirSync(join(ROOT, 'src', 'capabilities'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
const singular = (folder: string): string => folder.endsWith('ies') ? `${folder.slice(0, -3)}y` : folder.endsWith('ses') ? folder.slice(0, -2) : folder.replace(/s$/, '')

/** The capability that owns `table`, by its name. */
function ownerOf (table: string): string | undefined {
  return NAMED_OTHERWISE[table] ?? CAPABILITIES.find((folder) => table === folder || table.startsWith(`${singular(folder)}_`))
}

// the outbox is read by its consumers, each keeping its own position (STYLE.md, "One writer per protocol")
const READERS: Record<string, readonly string[]> = { events: ['webhooks', 'buses'] }
// copies and restores the whole database
const EVERY_TABLE = ['backups']
// `<table>_new` exists only while a migration rebuilds `<table>` (SQLite changes a CHECK so)
const rebuilt = (table: string): boolean => table.endsWith('_new') && ownerOf(table.slice(0, -'_new'.length)) !== undefined

// SQL is written upper case here, prose lower case: a table named after FROM, JOIN, INTO, UPDATE or TABLE
const MENTION = /\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:[A-Za-z_]+\s*\.\s*)?"?([a-z_]+)"?/g
const READS = new Set(['FROM', 'JOIN'])

/** Each table of `known` that `text` names in SQL, with how (a read: FROM, JOIN). */
function tablesNamed (text: string, known: ReadonlySet<string>): Array<{ table: string, read: boolean, line: number }> {
  return [...text.matchAll(MENTION)].flatMap((match) => {
    const [, keyword = '', table = ''] = match
    return known.has(table) ? [{ table, read: READS.has(keyword), line: text.slice(0, match.index).split('\n').length }] : []
  })
}

async function sourceFiles (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(entries.map(async (entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return await sourceFiles(path)
    return /\.(ts|js)$/.test(entry.name) ? [path] : []
  }))
  return nested.flat()
}

async function migratedTables (): Promise<Set<string>> {
  const tables = new Set<string>()
  for (const dialect of ['sqlite', 'postgres']) {
    for (const file of await readdir(join(ROOT, 'migrations', dialect))) {
      const text = await readFile(join(ROOT, 'migrations', dialect, file), 'utf8')
      for (const match of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/gi)) tables.add((match[1] ?? '').toLowerCase())
    }
  }
  return tables
}

test('When the migrations are read, then every table they create has an owner here', async () => {
  const unowned = [...await migratedTables()].filter((table) => ownerOf(table) === undefined && !rebuilt(table))
  assert.deepEqual(unowned, [], 'name each new table after the capability that owns it, or add it to NAMED_OTHERWISE')
})

test('When a table is named after its capability, then it is that capability\'s, whatever the capability', () => {
  const owners = Object.fromEntries(['pets', 'pet_counts', 'pet_category_counts', 'orders', 'api_keys', 'idempotency_keys', 'events', 'event_retention',
    'webhook_endpoints', 'webhook_deliveries', 'webhook_attempts', 'bus_positions', 'settings'].map((table) => [table, ownerOf(table)]))
  assert.deepEqual(owners, {
    pets: 'pets',
    pet_counts: 'pets',
    pet_category_counts: 'pets',
    orders: 'orders',
    api_keys: 'keys',
    idempotency_keys: 'idempotency',
    events: 'events',
    event_retention: 'events',
    webhook_endpoints: 'webhooks',
    webhook_deliveries: 'webhooks',
    webhook_attempts: 'webhooks',
    bus_positions: 'buses',
    settings: 'infra'
  })
  assert.equal(ownerOf('orderly_things'), undefined)
})

test('When src/capabilities is read, then each capability\'s SQL names only its own tables (the feed\'s consumers read events)', async () => {
  const known = new Set([...await migratedTables()].filter((table) => !rebuilt(table)))
  const crossings: string[] = []
  for (const path of await sourceFiles(join(ROOT, 'src', 'capabilities'))) {
    const file = relative(ROOT, path).split('\\').join('/')
    const capability = file.split('/')[2] ?? ''
    if (EVERY_TABLE.includes(capability)) continue
    for (const { table, read, line } of tablesNamed(await readFile(path, 'utf8'), known)) {
      if (ownerOf(table) === capability || (read && READERS[table]?.includes(capability) === true)) continue
      crossings.push(`${file}:${line}: ${table}, owned by ${ownerOf(table) ?? '?'}`)
    }
  }
  assert.deepEqual(crossings, [], 'ask the owner through its index.ts (a function, or a port it registers) instead')
})

test('When the check reads SQL that names a table, then it finds it, and leaves prose and common table expressions alone', () => {
  const known = new Set(['orders', 'pets', 'api_keys', 'idempotency_keys'])
  const found = (text: string): string[] => tablesNamed(text, known).map(({ table, read }) => `${table}${read ? ' read' : ''}`)
  assert.deepEqual(found("SELECT id FROM orders WHERE pet_id = ? AND status IN ('placed', 'approved')"), ['orders read'])
  assert.deepEqual(found('moved AS (UPDATE pets SET status = m.status FROM m WHERE pets.id = m.id)'), ['pets'])
  assert.deepEqual(found('INSERT INTO public."orders" (pet_id) VALUES ($1)'), ['orders'])
  assert.deepEqual(found('SELECT 1 FROM api_keys k JOIN idempotency_keys i ON true'), ['api_keys read', 'idempotency_keys read'])
  assert.deepEqual(found('// the events recorded from orders, in the order placed'), [])
  assert.deepEqual(found('WITH inserted AS (SELECT 1) SELECT * FROM inserted'), [])
})
