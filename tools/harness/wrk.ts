import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LOAD_GENERATOR_CPU, pinnedCommand } from './cpu-pinning.js'
import { countingRequestOf, type LoadRequest, type LoadResult, type LoadSpec } from './load-spec.js'

const TIMEOUT_SECONDS = 10

/** Whether `wrk` is on the PATH. */
export function hasWrk (): boolean {
  return spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0
}

/**
 * Makes sure `wrk` is there: as root, installs Debian's package (`apt-get install -y wrk`, after
 * `apt-get update` when the first try fails). Returns undefined when it is there, else why not.
 */
export function ensureWrk (log: (line: string) => void): string | undefined {
  if (hasWrk()) return undefined
  if (process.getuid?.() !== 0) return 'wrk is not installed, and installing it needs root: apt-get install -y wrk'
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const install = (): boolean => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'wrk'], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0
  log('wrk is not installed: apt-get install -y wrk')
  if (!install()) {
    spawnSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env })
    install()
  }
  return hasWrk() ? undefined : 'wrk is not installed, and apt-get install -y wrk failed'
}

/** `value` as a Lua string literal; only printable ASCII is expected. */
function luaString (value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`not printable ASCII, which the wrk script does not quote: ${JSON.stringify(value)}`)
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
}

function luaTable (entries: Record<string, string>): string {
  return `{ ${Object.entries(entries).map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`).join(', ')} }`
}

// printed by the script's `done`, read back by runWrk
const COUNTED_LINE = 'Counted ids:'

/**
 * The wrk script for `spec`. One fixed request is set on `wrk` itself (wrk then formats it once);
 * several, random paths or a counting body go through a `request` function that takes them in turn.
 * A counting body's ids start at its sequence's next and go up by one per request built, in one
 * counter (the script expects `wrk -t1`); `done` prints how many it built (wrk builds one more than
 * it sends, at start, to check the request), for the caller to take from the sequence.
 */
export function wrkScript (spec: LoadSpec): string {
  const headersWithBody = { ...spec.headers, 'Content-Type': 'application/json' }
  const [only] = spec.requests
  const counting = countingRequestOf(spec)
  if (spec.requests.length === 1 && only !== undefined && only.randomIdRange === undefined && counting === undefined) {
    const headers = only.body === undefined ? spec.headers : headersWithBody
    return [
      `wrk.method = ${luaString(only.method)}`,
      `wrk.path = ${luaString(only.path)}`,
      ...Object.entries(headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
      ...(only.body === undefined ? [] : [`wrk.body = ${luaString(only.body)}`]),
      ''
    ].join('\n')
  }
  const entry = (request: LoadRequest): string => `{ method = ${luaString(request.method)}, path = ${luaString(request.path)}` +
    (request.body === undefined ? '' : `, body = ${luaString(request.body)}`) +
    (request.countingBody === undefined ? '' : `, before = ${luaString(request.countingBody.before)}, after = ${luaString(request.countingBody.after)}`) +
    (request.randomIdRange === undefined ? '' : `, min = ${request.randomIdRange[0]}, max = ${request.randomIdRange[1]}`) + ' }'
  return `local specs = {
  ${spec.requests.map(entry).join(',\n  ')}
}
local plain = ${luaTable(spec.headers)}
local json = ${luaTable(headersWithBody)}
local fixed = {}
local n = #specs
local i = 0
local first = ${counting?.countingBody.ids.next ?? 0}
-- a global, so that done() can read it from the thread
counted = 0
local threads = {}

setup = function (thread)
  table.insert(threads, thread)
  if #threads > 1 then error("a counting body needs wrk -t1: two threads would send the same ids") end
end

init = function (args)
  math.randomseed(os.time())
  for k, s in ipairs(specs) do
    if s.min == nil and s.before == nil then fixed[k] = wrk.format(s.method, s.path, s.body and json or plain, s.body) end
  end
end

request = function ()
  i = i % n + 1
  local f = fixed[i]
  if f then return f end
  local s = specs[i]
  local path = s.min and (s.path .. math.random(s.min, s.max)) or s.path
  local body = s.body
  if s.before then
    body = s.before .. string.format("%d", first + counted) .. s.after
    counted = counted + 1
  end
  return wrk.format(s.method, path, (body and json) or plain, body)
end

done = function (summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("counted") end
  io.write(string.format("${COUNTED_LINE} %d\\n", total))
end
`
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

function durationMs (text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text)
  if (match === null) throw new Error(`wrk printed a latency it cannot read: ${text}`)
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number)
}

/** The figures of wrk's `--latency` report. */
export function parseWrkOutput (output: string): LoadResult {
  const fail = (what: string): never => { throw new Error(`wrk's output has no ${what}:\n${output}`) }
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(output) ?? fail('"N requests in T" line')
  const percentile = (p: number): number => durationMs((new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output) ?? fail(`${p}% latency`))[1] as string)
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const requests = Number(total[1])
  const durationSeconds = durationMs(`${total[2] as string}${total[3] as string}`) / 1000
  const reqPerSec = Number((/Requests\/sec:\s+([\d.]+)/.exec(output) ?? fail('Requests/sec'))[1])
  const [connect, read, write, timeout] = errors === null ? [0, 0, 0, 0] : errors.slice(1).map(Number) as [number, number, number, number]
  return {
    generator: 'wrk',
    requests,
    durationSeconds,
    reqPerSec,
    latencyMs: { p50: percentile(50), p90: percentile(90), p99: percentile(99) },
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    errors: connect + read + write + timeout,
    timeouts: timeout,
    countedIds: Number(new RegExp(`^${COUNTED_LINE} (\\d+)$`, 'm').exec(output)?.[1] ?? 0)
  }
}

/** One run of `wrk -t1 -c<connections> --latency` pinned to the load generator's CPU; a counting body's ids are taken from its sequence. */
export async function runWrk (spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'petstore-wrk-'))
  try {
    const script = join(dir, 'load.lua')
    await writeFile(script, wrkScript(spec))
    const argv = pinnedCommand(LOAD_GENERATOR_CPU, [
      'wrk', '-t1', `-c${spec.connections}`, `-d${Math.max(1, Math.round(spec.durationSeconds))}s`, '--latency', '--timeout', `${TIMEOUT_SECONDS}s`, '-s', script, `${spec.origin}/`
    ])
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
    if (code !== 0) throw new Error(`wrk exited with ${String(code)}: ${stderr}${stdout}`)
    const result = parseWrkOutput(stdout)
    countingRequestOf(spec)?.countingBody.ids.take(result.countedIds)
    return result
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
