import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// the outbox's one writer per engine (STYLE.md, "One writer per protocol"; docs/architecture.md, "The change feed")
const WRITERS = ['src/infra/database/postgres/postgres-outbox.ts', 'src/infra/database/sqlite/sqlite-outbox.ts']
// what only a writer may do: insert into events, or take the lock that puts event ids in commit order
const PROTOCOL = [/insert\s+into\s+events\b/i, /LOCKS\.changes/]

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
    const lines = (await readFile(path, 'utf8')).split('\n')
    lines.forEach((line, index) => {
      if (PROTOCOL.some((pattern) => pattern.test(line))) offenders.push(`${file}:${index + 1}: ${line.trim()}`)
    })
  }
  assert.deepEqual(offenders, [], 'call the outbox writer of the engine (recordPostgresEvents, EventRecordingStatement, recordSqliteEvents) instead')
})

test('When the writers are read, then each one inserts into events (the check above looks for the right text)', async () => {
  for (const file of WRITERS) assert.match(await readFile(join(ROOT, file), 'utf8'), PROTOCOL[0] as RegExp, file)
})
