import { mkdir, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'

// beside the packages it imports, which resolve from there as from the repository
const OUT_FILE = join(PROJECT_ROOT, 'node_modules', '.cache', 'petstore-bench', 'contract-equal-peer.mjs')

let built: Promise<string> | undefined

/**
 * The contract-equal peer as its engineer would deploy it: its own files compiled to one JavaScript file, the packages
 * it imports loaded from `node_modules` as they are (no bundle of them, no minifying). Run by `node` alone, so neither
 * its start-up nor its memory carry tsx's loader (the cold start and idle RSS targets compare with them). Built once a run.
 */
export async function contractPeerScript (): Promise<string> {
  built ??= compile()
  return built
}

async function compile (): Promise<string> {
  const { outputFiles } = await build({
    entryPoints: [join(PROJECT_ROOT, 'bench', 'peers', 'contract-equal', 'server.ts')],
    outfile: OUT_FILE,
    write: false,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning'
  })
  const [output] = outputFiles
  if (output === undefined) throw new Error('esbuild wrote no contract-equal peer')
  // written whole, then renamed into place: another run may be starting the peer from it
  await mkdir(dirname(OUT_FILE), { recursive: true })
  const partial = `${OUT_FILE}.${process.pid}.partial`
  await writeFile(partial, output.contents)
  await rename(partial, OUT_FILE)
  return OUT_FILE
}
