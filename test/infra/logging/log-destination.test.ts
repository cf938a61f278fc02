import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { PROJECT_ROOT } from '../../helpers/processes.js'

const run = promisify(execFile)

describe('log lines to stdout in batches (src/infra/logging/log-destination.ts)', () => {
  test('When a process gathers lines and calls process.exit at once, then every line reaches stdout, whole and in order', async () => {
    // 2,000 lines of 120 bytes: many 4 KiB batches, the first ones in flight at the exit, the last one only gathered
    const script = `
      const { batchedStdout } = await import(${JSON.stringify(join(PROJECT_ROOT, 'src/infra/logging/log-destination.ts'))})
      const out = batchedStdout()
      for (let i = 0; i < 2000; i++) out.write(JSON.stringify({ line: i, pad: 'x'.repeat(100) }) + '\\n')
      process.exit(0)
    `
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PROJECT_ROOT, maxBuffer: 1 << 24 })

    const lines = stdout.split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { line: number }).line)
    assert.deepEqual(lines, Array.from({ length: 2000 }, (_, i) => i))
  })
})
