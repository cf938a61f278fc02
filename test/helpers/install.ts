import { execFile, spawn } from 'node:child_process'
import { cp, mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type { TestContext } from 'node:test'
import { PROJECT_ROOT, within } from './processes.js'
import { tempDir } from './temp-dir.js'

// Installing a copy of the working tree as a user or the image would (test/release/*-install*.test.ts):
// one file per install, so that the concurrent group runs them side by side.

export const run = promisify(execFile)

/** A fresh clone of the working tree: its tracked files and new ones not ignored, as they are now (committed or not). */
export async function cloneWorkingTree (t: TestContext): Promise<string> {
  const clone = await tempDir(t)
  const { stdout } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 })
  for (const file of stdout.split('\0').filter((path) => path !== '' && existsSync(join(PROJECT_ROOT, path)))) {
    await mkdir(join(clone, dirname(file)), { recursive: true })
    await cp(join(PROJECT_ROOT, file), join(clone, file))
  }
  return clone
}

/** Runs `command` with `args` in `cwd` to completion; its exit code and everything it printed. */
export async function runToEnd (cwd: string, command: string, args: string[]): Promise<{ code: unknown, output: string }> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const code = await within(14 * 60_000, `${command} ${args.join(' ')} did not finish`, new Promise((resolve) => child.once('close', resolve)))
  return { code, output }
}

export async function npm (cwd: string, args: string[]): Promise<{ code: unknown, output: string }> {
  return runToEnd(cwd, 'npm', args)
}
