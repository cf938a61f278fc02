#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with TypeScript (every module as a file),
// copies the /docs page's plugin beside its module, then bundles the server and the CLI with esbuild:
// dist/bin/server.js and cli.js, written over tsc's output of them, the code they share, and the modules loaded only when configured
// (the SQLite or PostgreSQL store, tracing, Redis, CORS, …) as chunks beside it (dist/bin/server-*.js),
// still loaded only then. Reading and compiling one file instead of some 600 was most of what start-up
// cost (docs/performance.md#start-up). What cannot be bundled stays in node_modules, loaded from there as
// before: the native better-sqlite3 and pg (and its optional native binding), OpenTelemetry (its
// instrumentations patch modules as they load), @fastify/swagger-ui (it serves files found from its own
// folder), ioredis and undici (loaded only with REDIS_URL, or a webhook to deliver), the NATS and RabbitMQ
// clients (loaded only with NATS_URL, AMQP_URL).
// Every file is written whole under a temporary name and renamed into place, and a chunk of an earlier
// build is removed only once the new ones are there: a process that starts from dist/ while it is
// rebuilt (the tests start the CLI and servers from it while the release test builds) reads the old
// file or the new one, never half of one, and finds every chunk it names.
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import ts from 'typescript'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const bin = join(root, 'dist', 'bin')

/** Loaded from node_modules at run time, never bundled. */
const EXTERNAL = [
  'better-sqlite3', 'better-sqlite3-node20', 'pg', 'pg-native',
  '@opentelemetry/*', '@fastify/swagger-ui', 'ioredis', 'undici', '@nats-io/*', 'amqplib'
]

/** The package's `bin` (package.json's), which npm and npx run as programs: they must stay executable. */
const EXECUTABLES = new Set(Object.values(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).bin).map((file) => join(root, file)))

function writeWhole (file, content) {
  mkdirSync(dirname(file), { recursive: true })
  const partial = `${file}.${process.pid}.partial`
  writeFileSync(partial, content)
  // on the new file before the rename (a file written anew gets 0644 from the umask): `npx petstore`
  // runs the link npm made to it, never through node, and finds no moment at which it is not executable
  if (EXECUTABLES.has(file)) chmodSync(partial, 0o755)
  renameSync(partial, file)
}

// tsc -p tsconfig.build.json (its options, its diagnostics, no bundle after an error), through the
// compiler's API so that each file it emits is written whole
const formatHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' }
const fail = (diagnostics) => {
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost))
  process.exit(1)
}
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), undefined,
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => fail([diagnostic]) })
if (config.errors.length > 0) fail(config.errors)
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences })
const emitted = program.emit(undefined, (file, text) => { writeWhole(file, text) })
const diagnostics = ts.sortAndDeduplicateDiagnostics([...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics])
if (diagnostics.length > 0) fail(diagnostics)
writeWhole(join(root, 'dist/capabilities/docs/swagger-ui-plugin.js'), readFileSync(join(root, 'src/capabilities/docs/swagger-ui-plugin.js')))

/**
 * @fastify/swagger requires the `yaml` package (160 KB of code) at load for `swagger({ yaml: true })`, which the service
 * never calls: its documents' YAML is js-yaml's, loaded with them (served-documents.ts). The bundle gets a stand-in that
 * says so if it is ever called, and every instance is spared loading and keeping the package.
 */
const swaggerYamlStandIn = {
  name: 'swagger-yaml-stand-in',
  setup (build) {
    build.onResolve({ filter: /^yaml$/ }, (args) => args.importer.includes(`${'node_modules'}/@fastify/swagger/`) ? { path: 'yaml', namespace: 'swagger-yaml-stand-in' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'swagger-yaml-stand-in' }, () => ({
      contents: "module.exports = { stringify () { throw new Error('swagger({ yaml: true }) is not built in: the served YAML is js-yaml\\'s (served-documents.ts)') }, parse () { throw new Error('@fastify/swagger\\'s static mode is not built in') } }",
      loader: 'js'
    }))
  }
}

/**
 * prom-client requires @opentelemetry/api at load (46 files from node_modules) for one thing: exemplars on its CPU
 * counters, which the service never enables. The bundle gives prom-client a stand-in that requires the API when prom-client
 * first reads `trace` or `context` (the same module from node_modules, so with tracing on it is the SDK's): an instance
 * without tracing never loads it.
 */
const promClientOtelStandIn = {
  name: 'prom-client-otel-stand-in',
  setup (build) {
    build.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) => args.importer.includes(`${'node_modules'}/prom-client/`) ? { path: '@opentelemetry/api', namespace: 'prom-client-otel-stand-in' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'prom-client-otel-stand-in' }, () => ({
      contents: "let api; const load = () => (api ??= require('@opentelemetry/api')); module.exports = { get trace () { return load().trace }, get context () { return load().context } }",
      loader: 'js'
    }))
  }
}

/** The programs bundled: the server, and the CLI (`npx petstore`: 0.1 CPU-s a command instead of 0.3 from 900 modules). */
const ENTRIES = ['server.js', 'cli.js']

const bundled = await build({
  // tsc's output, so the bundle runs exactly the JavaScript the modules run; its source maps are followed back to src/
  entryPoints: ENTRIES.map((entry) => join(bin, entry)),
  outdir: bin,
  allowOverwrite: true,
  // kept in memory, then written whole below
  write: false,
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
  plugins: [swaggerYamlStandIn, promClientOtelStandIn],
  logLevel: 'warning'
})
// the chunks first, the entries that name them last
const isEntry = (output) => ENTRIES.some((entry) => basename(output.path).startsWith(entry))
const outputs = [...bundled.outputFiles].sort((a, b) => Number(isEntry(a)) - Number(isEntry(b)))
for (const output of outputs) writeWhole(output.path, output.contents)

// chunks of an earlier build have other names (content hashes): left there, they would pile up
const written = new Set(outputs.map((output) => basename(output.path)))
for (const name of readdirSync(bin)) if (/^server-.+\.js(\.map)?$/.test(name) && !written.has(name)) rmSync(join(bin, name))
