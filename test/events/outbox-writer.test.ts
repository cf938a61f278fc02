import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// the outbox's one writer per engine (STYLE.md, "One writer per protocol"; docs/architecture.md, "The change feed")
const WRITERS = ['src/infra/database/postgres/postgres-outbox.ts', 'src/infra/database/sqlite/sqlite-outbox.ts']

// between two words of a statement: spaces and line breaks, SQL comments, or the end of one string and the
// start of the next (`'INSERT INTO ' +` on one line, `'events …'` on the next)
const GAP = String.raw`(?:\s|/\*[\s\S]*?\*/|--[^\n]*\n|['"\x60]\s*\+\s*['"\x60])+`
// a name as SQL writes it: bare, "quoted", `backticked` or [bracketed]
const quoted = (name: string): string => String.raw`(?:${name}(?![\w$])|"${name}"|\x60${name}\x60|\[${name}\])`
const SCHEMA = String.raw`(?:[A-Za-z_][\w$]*|"[^"\n]+"|\x60[^\x60\n]+\x60|\[[^\]\n]+\])\s*\.\s*`
const EVENTS = `(?:${SCHEMA})?${quoted('events')}`
// what only a writer may do: add rows to events (INSERT, INSERT OR …, REPLACE, MERGE; SQLite's and PostgreSQL's
// spellings), or take the lock that puts event ids in commit order
const PROTOCOL = [
  new RegExp(String.raw`\b(?:(?:INSERT|REPLACE)(?:${GAP}OR${GAP}(?:IGNORE|REPLACE|ABORT|FAIL|ROLLBACK))?|MERGE)${GAP}INTO${GAP}${EVENTS}`, 'gi'),
  /\bLOCKS\s*(?:\.\s*changes\b|\[\s*['"\x60]changes['"\x60]\s*\])/g
]

// the rest of the protocol, which only a writer uses: the changes lock as the writer's module offers it, the
// channel other instances hear of recorded events on, and the signal this instance hears of them by
const SIGNALS = [
  /\b(?:CHANGES_LOCK_CTE|takeChangesLock)\b/g,
  /\b(?:petstore_events_recorded|EVENTS_RECORDED_CHANNEL)\b/g,
  /\beventsRecorded\s*(?:\.\s*|\[\s*['"\x60])(?:raise|raiseAfterThisTask)\b/g
]
// where the channel and the signal are made, and what every consumer wakes on (it listens, never notifies)
const SIGNAL_HOMES = ['src/infra/database/commit-signal.ts', 'src/infra/database/watch-recorded-events.ts']
/** Each place in `text` that matches one of `patterns`: its line and what it says, over the whole text (a statement may span lines). */
function usesOf (patterns: readonly RegExp[], text: string): string[] {
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) =>
    `${text.slice(0, match.index).split('\n').length}: ${match[0].replace(/\s+/g, ' ')}`))
}

/** Each place in `text` that does what only a writer may. */
const protocolUses = (text: string): string[] => usesOf(PROTOCOL, text)
/** Each place in `text` that uses the lock, the channel or the signal, which only a writer may. */
const signalUses = (text: string): string[] => usesOf(SIGNALS, text)

// what the check must catch, as code could spell it
const CAUGHT = [
  'INSERT INTO events (type, occurred_at, data) VALUES (?, ?, ?)',
  'insert into events(type) values ($1)',
  'INSERT OR IGNORE INTO events (type) VALUES (?)',
  'INSERT OR REPLACE INTO events (type) VALUES (?)',
  'REPLACE INTO events (type) VALUES (?)',
  'INSERT INTO "events" (type) VALUES ($1)',
  'INSERT INTO `events` (type) VALUES (?)',
  'INSERT INTO [events] (type) VALUES (?)',
  'INSERT INTO main.events (type) VALUES (?)',
  'INSERT INTO public."events" (type) VALUES ($1)',
  'INSERT INTO "main"."events" (type) VALUES (?)',
  'INSERT INTO `main`.`events` (type) VALUES (?)',
  'connection.prepare(`\n  INSERT INTO\n    events (type)\n  VALUES (?)`)',
  "const sql = 'INSERT INTO ' +\n  'events (type) VALUES (?)'",
  'INSERT /* the outbox */ INTO events (type) VALUES (?)',
  'WITH e AS (SELECT 1) INSERT INTO events (type) SELECT type FROM e',
  'MERGE INTO events USING changes ON false WHEN NOT MATCHED THEN INSERT (type) VALUES (changes.type)',
  'await client.query(`SELECT $' + '{lockSql(LOCKS.changes)}`)',
  "lockSql(LOCKS['changes'])"
]
const SIGNALLED = [
  'text: `WITH $' + '{CHANGES_LOCK_CTE}, inserted AS (…)`',
  'await takeChangesLock(client)',
  "SELECT pg_notify('petstore_events_recorded', current_schema())",
  "import { EVENTS_RECORDED_CHANNEL } from '../../../infra/database/commit-signal.js'",
  'this.#database.eventsRecorded.raise()',
  'database.afterTransaction(client, database.eventsRecorded.raise)',
  'database.eventsRecorded.raiseAfterThisTask()',
  "database.eventsRecorded['raise']()"
]
// what it must leave alone: other tables, and reading or deleting events (the feed, retention)
const LEFT = [
  'INSERT INTO events_archive (type) VALUES (?)',
  'INSERT INTO webhook_events (type) VALUES (?)',
  'INSERT INTO "event_deliveries" (id) VALUES ($1)',
  'SELECT id, type FROM events WHERE id > ?',
  'DELETE FROM events WHERE occurred_at < ?',
  'INSERT INTO pets (name) VALUES (?)',
  'lockSql(LOCKS.migrations)'
]
const QUIET = [
  'database.eventsRecorded.subscribe(() => { this.wake() })',
  "database.listen('petstore_pets_changed')",
  'const ordered = true'
]

async function sourceFiles (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(entries.map(async (entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return await sourceFiles(path)
    return /\.(ts|js|cjs|mjs)$/.test(entry.name) ? [path] : []
  }))
  return nested.flat()
}

test('When src/ is read, then only the outbox writers insert into events or take the changes lock', async () => {
  const offenders: string[] = []
  for (const path of await sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path).split('\\').join('/')
    if (WRITERS.includes(file)) continue
    offenders.push(...protocolUses(await readFile(path, 'utf8')).map((use) => `${file}:${use}`))
  }
  assert.deepEqual(offenders, [], 'call the outbox writer of the engine (recordPostgresEvents, EventRecordingStatement, recordSqliteEvents) instead')
})

test('When src/ is read, then only the outbox writers use the changes lock, the events channel or eventsRecorded\'s raise', async () => {
  const offenders: string[] = []
  for (const path of await sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path).split('\\').join('/')
    if (WRITERS.includes(file) || SIGNAL_HOMES.includes(file)) continue
    offenders.push(...signalUses(await readFile(path, 'utf8')).map((use) => `${file}:${use}`))
  }
  assert.deepEqual(offenders, [], 'hand the outbox writer what the change needs (commitOrderedStatement, KnownEventsStatement, EventRecordingStatement) instead')
})

test('When the check reads the ways code can add events or take the lock, then it catches each, and leaves other tables and reads alone', () => {
  assert.deepEqual(CAUGHT.filter((text) => protocolUses(text).length === 0), [], 'not caught')
  assert.deepEqual(LEFT.filter((text) => protocolUses(text).length > 0), [], 'caught, but not the protocol')
  assert.deepEqual(SIGNALLED.filter((text) => signalUses(text).length === 0), [], 'not caught')
  assert.deepEqual(QUIET.filter((text) => signalUses(text).length > 0), [], 'caught, but neither the lock, the channel nor the signal')
})

test('When the writers are read, then each one inserts into events (the check above looks for the right text)', async () => {
  for (const file of WRITERS) assert.ok(protocolUses(await readFile(join(ROOT, file), 'utf8')).some((use) => /into/i.test(use)), `${file} adds no events that the check sees`)
  assert.ok(protocolUses(await readFile(join(ROOT, WRITERS[0] as string), 'utf8')).some((use) => use.includes('LOCKS')), `${WRITERS[0]} takes no changes lock that the check sees`)
  for (const file of WRITERS) assert.ok(signalUses(await readFile(join(ROOT, file), 'utf8')).some((use) => /eventsRecorded/.test(use)), `${file} raises no eventsRecorded that the check sees`)
})
