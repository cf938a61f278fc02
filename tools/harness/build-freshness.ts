import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { PROJECT_ROOT } from './project-root.js'

/**
 * The files of `src/` whose build in `dist/` is missing or older than they are (`src/x.ts` is built
 * to `dist/x.js`, `src/x.js` copied there), as paths below `src/`: `npm run build` brings them up to
 * date. Processes the tests start run the build, so a stale one would test old code.
 */
export function staleBuildFiles (root = PROJECT_ROOT): string[] {
  const source = join(root, 'src')
  return readdirSync(source, { recursive: true, encoding: 'utf8' })
    .filter((file) => (file.endsWith('.ts') && !file.endsWith('.d.ts')) || file.endsWith('.js'))
    .filter((file) => {
      const built = join(root, 'dist', file.replace(/\.ts$/, '.js'))
      return !existsSync(built) || statSync(built).mtimeMs < statSync(join(source, file)).mtimeMs
    })
    .sort()
}

let checked: string | undefined

/**
 * Throws, naming the files, when `dist/` is older than `src/` (see {@link staleBuildFiles}); checked
 * once per process. `npm run test:suites` builds first when it is, so only a test file run on its
 * own can meet this.
 */
export function assertFreshBuild (root = PROJECT_ROOT): void {
  if (checked === root) return
  const stale = staleBuildFiles(root)
  if (stale.length > 0) {
    const shown = stale.slice(0, 5).join(', ') + (stale.length > 5 ? ` and ${stale.length - 5} more` : '')
    throw new Error(`dist/ is older than src/ (${shown}): the servers and CLIs the tests start run the build; run npm run build (npm run test:suites does when needed)`)
  }
  checked = root
}
