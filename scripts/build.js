#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with TypeScript (every module as a file: what the CLI runs),
// copies the /docs page's plugin beside its module, then bundles the server into one file with esbuild:
// dist/bin/server.js, written over tsc's output of it, and the modules it loads only when configured
// (the SQLite or PostgreSQL store, tracing, Redis, CORS, …) as chunks beside it (dist/bin/server-*.js),
// still loaded only then. Reading and compiling one file instead of some 600 was most of what start-up
// cost (docs/performance.md#start-up). What cannot be bundled stays in node_modules, loaded from there as
// before: the native better-sqlite3 and pg (and its optional native binding), OpenTelemetry (its
// instrumentations patch modules as they load), @fastify/swagger-ui (it serves files found from its own
// folder), ioredis and undici (loaded only with REDIS_URL, or a webhook to deliver).
import { execFileSync } from 'node:child_process'
import { cpSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const require = createRequire(import.meta.url)
const bin = join(root, 'dist', 'bin')

/** Loaded from node_modules at run time, never bundled. */
const EXTERNAL = [
  'better-sqlite3', 'better-sqlite3-node20', 'pg', 'pg-native',
  '@opentelemetry/*', '@fastify/swagger-ui', 'ioredis', 'undici'
]

execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
cpSync(join(root, 'src/docs/swagger-ui-plugin.js'), join(root, 'dist/docs/swagger-ui-plugin.js'))

// chunks of an earlier build have other names (content hashes): left there, they would pile up
for (const name of readdirSync(bin)) if (/^server-.+\.js(\.map)?$/.test(name)) rmSync(join(bin, name))

await build({
  // tsc's output, so the bundle runs exactly the JavaScript the modules run; its source maps are followed back to src/
  entryPoints: [join(bin, 'server.js')],
  outdir: bin,
  allowOverwrite: true,
  bundle: true,
  // a dynamic import() becomes a chunk loaded when it runs, as it was a module loaded when it ran
  splitting: true,
  // beside the entry, at the depth of the modules they came from (paths found from import.meta.url stay right)
  chunkNames: 'server-[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // the bundled CommonJS packages (Fastify, pino, …) require Node's built-ins
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  // whitespace and syntax only: names stay (stack traces, Function#name); the source map leads back to src/.
  // A smaller file to read, parse and keep in memory: about 6 ms of CPU and 1 MB of RSS (docs/performance.md)
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  logLevel: 'warning'
})
