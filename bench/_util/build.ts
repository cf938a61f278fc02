import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { staleBuildFiles } from '../../tools/harness/build-freshness.js'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { log } from './plan.js'

/**
 * `npm run build` in `root` (the repository by default) unless `dist/` is already newer than every
 * file of `src/` (CI's `npm ci` has just built it): the service the bench runs is the build, as
 * production runs it.
 */
export async function buildService (root = PROJECT_ROOT): Promise<void> {
  if (existsSync(join(root, 'dist', 'bin', 'server.js')) && staleBuildFiles(root).length === 0) {
    log(`dist/ is newer than src/${root === PROJECT_ROOT ? '' : ` in ${root}`}: not rebuilt`)
    return
  }
  log(`npm run build${root === PROJECT_ROOT ? '' : ` in ${root}`}`)
  const child = spawn('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  if (code !== 0) throw new Error(`npm run build exited with ${String(code)}`)
  if (!existsSync(join(root, 'dist', 'bin', 'server.js'))) throw new Error('npm run build did not produce dist/bin/server.js')
}
