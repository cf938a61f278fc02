import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The installation's root (where package.json is): the nearest folder above this module that has one.
 * It is found rather than assumed because the module sits at different depths: `src/` (tsx), `dist/`
 * (the compiled modules) and `dist/bin/` (the server's and the CLI's bundles, scripts/build.js). A relative
 * SQLite path, the migrations and the version then resolve alike for the server and the CLI, wherever
 * either is started.
 */
export const INSTALL_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)))

function findRoot (start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) return dirname(start)
  }
}
