import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
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

  test('When lines come faster than one write at a time could take them, then every full batch is on stdout before the writer yields, none waiting in memory', async () => {
    // 240 KB of lines in one turn: 58 batches of 4 KiB. Written one asynchronous write at a time, a loaded instance's lines
    // waited in memory (65 % of 350,000 access lines behind after 10 s under wrk) and were promoted to V8's old space
    const dir = await mkdtemp(join(tmpdir(), 'petstore-log-'))
    try {
      const file = join(dir, 'stdout')
      const script = `
        const { fstatSync } = await import('node:fs')
        const { batchedStdout } = await import(${JSON.stringify(join(PROJECT_ROOT, 'src/infra/logging/log-destination.ts'))})
        const out = batchedStdout()
        let gathered = 0
        for (let i = 0; i < 2000; i++) {
          const line = JSON.stringify({ line: i, pad: 'x'.repeat(100) }) + '\\n'
          out.write(line)
          gathered += line.length
        }
        // still in the turn that wrote the lines
        process.stderr.write(JSON.stringify({ gathered, onStdout: fstatSync(1).size }))
        process.exit(0)
      `
      const handle = await open(file, 'w')
      let stderr = ''
      try {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', handle.fd, 'pipe'] })
        child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
        const [code] = await once(child, 'exit') as [number | null]
        assert.equal(code, 0, stderr)
      } finally {
        await handle.close()
      }
      const { gathered, onStdout } = JSON.parse(stderr) as { gathered: number, onStdout: number }
      assert.ok(onStdout > gathered - 4096 && onStdout <= gathered, `${onStdout} of ${gathered} bytes were on stdout before the writer yielded; at most the last batch (4 KiB) may wait`)
      // and the exit wrote the last one, every line whole and in order
      const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { line: number }).line)
      assert.deepEqual(lines, Array.from({ length: 2000 }, (_, i) => i))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
