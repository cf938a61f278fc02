#!/usr/bin/env node
// `npm run build`: src/ compiled into dist/ exactly as `tsc -p tsconfig.build.json` does (its options,
// its diagnostics, non-zero exit on an error), and the one plain JavaScript file of src/ copied there.
// Each file is written whole under a temporary name and renamed into place: a process that loads dist/
// while it is rebuilt (the tests start the CLI and servers from dist/ while another test runs
// `npm run release`, which builds) reads the old file or the new one, never a half-written one.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const COPIED = ['docs/swagger-ui-plugin.js']

function writeWhole (file, content) {
  mkdirSync(dirname(file), { recursive: true })
  const partial = `${file}.${process.pid}.partial`
  writeFileSync(partial, content)
  renameSync(partial, file)
}

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
for (const file of COPIED) writeWhole(join(root, 'dist', file), readFileSync(join(root, 'src', file)))
if (diagnostics.length > 0) fail(diagnostics)
