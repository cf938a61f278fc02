import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { log } from './plan.js'

/** `npm run build` in `root` (the repository by default): the service the bench runs is the build, as production runs it. */
export async function buildService (root = PROJECT_ROOT): Promise<void> {
  log(`npm run build${root === PROJECT_ROOT ? '' : ` in ${root}`}`)
  const child = spawn('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  if (code !== 0) throw new Error(`npm run build exited with ${String(code)}`)
  if (!existsSync(join(root, 'dist', 'bin', 'server.js'))) throw new Error('npm run build did not produce dist/bin/server.js')
}
