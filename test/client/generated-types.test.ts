import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { test } from 'node:test'
import { GENERATED_TYPES_PATH, REGENERATE_COMMAND, renderClientTypes } from '../../scripts/client-types.js'
import { PROJECT_ROOT } from '../helpers/processes.js'

test('When the OpenAPI document is rendered as types, then it matches the client\'s checked-in generated types', async () => {
  const expected = await renderClientTypes()
  const checkedIn = await readFile(GENERATED_TYPES_PATH, 'utf8')

  if (checkedIn === expected) return
  const expectedLines = expected.split('\n')
  const checkedInLines = checkedIn.split('\n')
  const line = expectedLines.findIndex((text, index) => text !== checkedInLines[index])
  assert.fail(`${relative(PROJECT_ROOT, GENERATED_TYPES_PATH)} no longer matches the OpenAPI document the service serves ` +
    `(first difference at line ${line + 1}: expected ${JSON.stringify(expectedLines[line])}, ` +
    `found ${JSON.stringify(checkedInLines[line])}). Regenerate it with \`${REGENERATE_COMMAND}\` and commit it.`)
})
