import { cp, mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { PROJECT_ROOT } from './project-root.js'

/** tsx's loader, by absolute URL: a process started outside the repository cannot resolve `--import tsx`. */
export const TSX_LOADER = import.meta.resolve('tsx')

/**
 * Copies the service's source, its build (`dist/`: copied after `src/`, so it is the newer), migrations
 * and package manifest into `dir` (its `node_modules` linked to the repository's): an installation of
 * its own, whose default SQLite file is `dir/data/petstore.db`, so a test can use the default
 * `DATABASE_URL` without touching the repository's.
 */
export async function copyInstallation (dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  for (const entry of ['src', 'dist', 'migrations', 'package.json', 'tsconfig.json']) {
    await cp(join(PROJECT_ROOT, entry), join(dir, entry), { recursive: true })
  }
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return dir
}
