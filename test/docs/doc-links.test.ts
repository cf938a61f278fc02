import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { PROJECT_ROOT } from '../helpers/processes.js'

/** The repository's Markdown files: tracked ones and new ones not ignored. */
async function markdownFiles (): Promise<string[]> {
  const { stdout } = await promisify(execFile)('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], { cwd: PROJECT_ROOT })
  return stdout.split('\0').filter((file) => file !== '' && existsSync(join(PROJECT_ROOT, file)))
}

test('When the docs link to a file or name a relative path, then it is one inside the repository that exists: the repository stands on its own', async () => {
  const files = await markdownFiles()
  assert.ok(files.length >= 8, `only ${files.length} Markdown files found`)
  const problems: string[] = []
  for (const file of files) {
    const text = await readFile(join(PROJECT_ROOT, file), 'utf8')
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    for (const target of targets) {
      const path = resolve(PROJECT_ROOT, dirname(file), decodeURIComponent(target.split('#')[0]!))
      if (relative(PROJECT_ROOT, path).startsWith('..')) problems.push(`${file}: ${target} is outside the repository`)
      else if (!existsSync(path)) problems.push(`${file}: ${target} does not exist`)
    }
    // a path quoted in the prose, such as `../shared/spec/…`, is as much a citation as a link; the docs
    // quote paths from the repository's root, where a path that starts with ../ leaves it
    for (const [cited] of text.replace(/\]\([^)\s]+\)/g, '').matchAll(/(?<![\w.])\.\.\/[\w./-]+/g)) problems.push(`${file}: ${cited} is outside the repository`)
  }
  assert.deepEqual(problems, [])
})
