// Whether dist/ is older than what it is built from: `npm start` (scripts/build-if-compiler.js), the test
// harness (tools/harness/build-freshness.ts) and the benchmark rebuild only when it is. Plain JavaScript,
// with its types in stale-build.d.ts, so that `npm start` runs it without a TypeScript loader.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Files outside src/ that change what `npm run build` writes: its script, the compiler's options, the bundled packages. */
export const BUILD_INPUTS = ['scripts/build.js', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']

const modified = (file) => statSync(file).mtimeMs

/** Files outside the client's `src/` that change what its build (`npm run build:client`) writes. */
export const CLIENT_BUILD_INPUTS = ['clients/typescript/tsconfig.json', 'clients/typescript/package.json', 'package-lock.json']

/**
 * The files below `root` whose build in `dist/` is missing or older than they are, as paths relative to
 * `root`: a file of `src/` (`src/x.ts` is built to `dist/x.js`, `src/x.js` copied there), or one of
 * {@link BUILD_INPUTS} newer than the bundle (`dist/bin/server.js`, written last). Empty when dist/ is current.
 */
export function staleBuildFiles (root) {
  return staleBelow(root, 'src', 'dist', BUILD_INPUTS, join('dist', 'bin', 'server.js'))
}

/**
 * The same of the TypeScript client (`clients/typescript/src/x.ts` built to `clients/typescript/dist/x.js`,
 * or one of {@link CLIENT_BUILD_INPUTS} newer than its `dist/index.js`). Empty when its dist/ is current.
 */
export function staleClientBuildFiles (root) {
  return staleBelow(root, join('clients', 'typescript', 'src'), join('clients', 'typescript', 'dist'), CLIENT_BUILD_INPUTS, join('clients', 'typescript', 'dist', 'index.js'))
}

function staleBelow (root, sourceDir, outputDir, inputs, marker) {
  const source = join(root, sourceDir)
  const stale = readdirSync(source, { recursive: true, encoding: 'utf8' })
    .filter((file) => (file.endsWith('.ts') && !file.endsWith('.d.ts')) || file.endsWith('.js'))
    .filter((file) => {
      const built = join(root, outputDir, file.replace(/\.ts$/, '.js'))
      return !existsSync(built) || modified(built) < modified(join(source, file))
    })
    .map((file) => join(sourceDir, file))
  const bundled = existsSync(join(root, marker)) ? modified(join(root, marker)) : -Infinity
  for (const input of inputs) if (existsSync(join(root, input)) && modified(join(root, input)) > bundled) stale.push(input)
  return stale.sort()
}
