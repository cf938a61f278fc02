import { execFileSync } from 'node:child_process'
import { staleBuildFiles as staleBelow } from '../../scripts/stale-build.js'
import { PROJECT_ROOT } from './project-root.js'

/**
 * The files whose build in `dist/` is missing or older than they are (a file of `src/`, or the build's
 * script, options or lockfile: scripts/stale-build.js), relative to `root`: `npm run build` brings them
 * up to date. Processes the tests start run the build, so a stale one would test old code.
 */
export function staleBuildFiles (root = PROJECT_ROOT): string[] {
  return staleBelow(root)
}

function describe (stale: string[]): string {
  return stale.slice(0, 5).join(', ') + (stale.length > 5 ? ` and ${stale.length - 5} more` : '')
}

let checked = false

/**
 * Makes sure `dist/` is as new as `src/` before a test starts the CLI or a server from it, once per
 * process: when it is not (a test file run on its own after a change; `npm run test:suites` builds
 * first), runs `npm run build` (whose files are replaced whole, so processes building at once do not
 * harm each other), and throws, naming the files, if that did not bring it up to date.
 */
export function ensureFreshBuild (): void {
  if (checked) return
  const stale = staleBuildFiles()
  if (stale.length > 0) {
    process.stderr.write(`dist/ is older than src/ (${describe(stale)}): npm run build\n`)
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: PROJECT_ROOT, stdio: ['ignore', 2, 2] })
    const still = staleBuildFiles()
    if (still.length > 0) throw new Error(`dist/ is still older than src/ after npm run build (${describe(still)})`)
  }
  checked = true
}
