import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/build-app.js'
import { PROJECT_ROOT } from '../helpers/processes.js'

// the served prose lists the types from the registrations; the markdown is written by hand, so it is checked here
test('When docs/api-decisions.md lists the event types, then it names exactly the types the app registers, in their order', async (t) => {
  const { app } = await buildTestApp(t)
  const page = await readFile(join(PROJECT_ROOT, 'docs', 'api-decisions.md'), 'utf8')

  const bullet = /^ {2}- \*Types\.\*(.+?)(?=^ {2}- )/ms.exec(page)?.[1]
  assert.ok(bullet !== undefined, 'the feed\'s "*Types.*" bullet is in docs/api-decisions.md')
  // the types it lists: up to "There is no …" (which names one that does not exist), outside the parentheses (operations, fields)
  const list = (bullet.split('There is no')[0] ?? '').replace(/\([^)]*\)/g, '')
  const named = [...list.matchAll(/`([a-z]+\.[a-z]+)`/g)].map(([, type]) => type)
  assert.deepEqual(named, app.eventTypes.types)
})
