/**
 * User-space instructions per request of the built service under callgrind, when CPU time is too noisy to judge a
 * lever (docs/performance.md, "Instructions"): `node --import tsx bench/instructions.ts --path /v1/pets/7
 * --database sqlite:/tmp/pets.db [--installation <dir>] [--requests 2000] [--node-flags=--perf-basic-prof]`.
 * The store must hold what the path reads. It warms the JIT with 3,000 requests, counts `--requests` from eight
 * keep-alive connections, and says how many of them called `Runtime_DefineKeyedOwnPropertyInLiteral`: V8's cache of
 * Node's nextTick entry turned megamorphic in that process, 10–15 % of a `getPet`, luck of its start-up.
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { childEnv } from '../tools/harness/child-env.js'
import { PROJECT_ROOT } from '../tools/harness/project-root.js'

const WARM_UP_REQUESTS = 3000
const CONNECTIONS = 8
const MEGAMORPHIC_SIGN = 'Runtime_DefineKeyedOwnPropertyInLiteral'

const { values } = parseArgs({
  options: {
    path: { type: 'string', default: '/v1/pets/1' },
    database: { type: 'string' },
    installation: { type: 'string', default: PROJECT_ROOT },
    requests: { type: 'string', default: '2000' },
    'node-flags': { type: 'string', default: '' }
  }
})
if (values.database === undefined) throw new Error('--database: a DATABASE_URL whose store holds what --path reads')
const requests = Number(values.requests)
const port = 30_000 + Math.floor(Math.random() * 20_000)
const apiKey = `bench_${randomBytes(32).toString('base64url')}`
const outputs = join(tmpdir(), `petstore-callgrind-${port}`)
// vgdb, which callgrind_control talks through, needs USER and HOST
const controlEnv = { ...process.env, USER: process.env.USER ?? 'root', HOST: '127.0.0.1' }

const server = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outputs}.%p`, process.execPath,
  ...values['node-flags'].split(' ').filter((flag) => flag !== ''), join(values.installation, 'dist/bin/server.js')], {
  cwd: values.installation,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: childEnv({
    USER: controlEnv.USER,
    HOST: controlEnv.HOST,
    NODE_ENV: 'production',
    PORT: String(port),
    DATABASE_URL: values.database,
    PETSTORE_API_KEYS: apiKey,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    // no timer runs more often than under real load
    OVERLOAD_SHEDDING: 'false'
  })
})
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })

async function get (path: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${apiKey}` } }, (response) => {
      response.resume()
      response.on('end', () => { resolve(response.statusCode ?? 0) })
    }).on('error', reject)
  })
}

async function send (count: number): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {}
  let sent = 0
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (sent++ < count) {
      const status = await get(values.path)
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  }))
  return statuses
}

function control (...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore', env: controlEnv })
}

try {
  for (let attempt = 0; ; attempt++) {
    if (await get('/readyz').catch(() => 0) === 200) break
    if (attempt > 600) throw new Error('the service did not answer /readyz within 2 minutes')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  await send(WARM_UP_REQUESTS)
  control('-i', 'on')
  const statuses = await send(requests)
  control('-i', 'off')
  control('-d')
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.kill('SIGTERM')
  // its last dump, at exit, is written by then
  await exited
  let instructions = 0
  let megamorphic = false
  for (const file of readdirSync(tmpdir()).filter((name) => name.startsWith(`${outputs.slice(tmpdir().length + 1)}.`))) {
    const text = readFileSync(join(tmpdir(), file), 'utf8')
    instructions += Number(/^totals: (\d+)/m.exec(text)?.[1] ?? 0)
    megamorphic ||= text.includes(MEGAMORPHIC_SIGN)
    rmSync(join(tmpdir(), file))
  }
  process.stdout.write(`${values.path}: ${Math.round(instructions / requests)} instructions a request (statuses ${JSON.stringify(statuses)}); ` +
    `nextTick's cache ${megamorphic ? 'MEGAMORPHIC in this process' : 'monomorphic'}\n`)
} finally {
  agent.destroy()
  server.kill('SIGTERM')
}
