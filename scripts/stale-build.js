// Whether dist/ is older than what it is built from: `npm start` (scripts/build-if-compiler.js), the test
// harness (tools/harness/build-freshness.ts) and the benchmark rebuild only when it is. Plain JavaScript,
// with its types in stale-build.d.ts, so that `npm start` runs it without a TypeScript loader.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Files outside src/ that change what `npm run build` writes: its script, the compiler's options, the bundled packages. */
export const BUILD_INPUTS = ['scripts/build.js', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']

const modified = (file) => statSync(file).mtimeMs

/**
 * The files below `root` whose build in `dist/` is missing or older than they are, as paths relative to
 * `root`: a file of `src/` (`src/x.ts` is built to `dist/x.js`, `src/x.js` copied there), or one of
 * {@link BUILD_INPUTS} newer than the bundle (`dist/bin/server.js`, written last). Empty when dist/ is current.
 */
export function staleBuildFiles (root) {
  const source = join(root, 'src')
  const stale = readdirSync(source, { recursive: true, encoding: 'utf8' })
    .filter((file) => (file.endsWith('.ts') && !file.endsWith('.d.ts')) || file.endsWith('.js'))
    .filter((file) => {
      const built = join(root, 'dist', file.replace(/\.ts$/, '.js'))
      return !existsSync(built) || modified(built) < modified(join(source, file))
    })
    .map((file) => join('src', file))
  const bundle = join(root, 'dist', 'bin', 'server.js')
  const bundled = existsSync(bundle) ? modified(bundle) : -Infinity
  for (const input of BUILD_INPUTS) if (existsSync(join(root, input)) && modified(join(root, input)) > bundled) stale.push(input)
  return stale.sort()
}
