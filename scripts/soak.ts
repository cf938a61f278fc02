/**
 * Soak test: `npm run soak -- [--duration 60] [--connections 10] [--store sqlite|postgres]
 * [--max-growth-mb 50] [--warmup <s>] [--seed 200] [--log-level warn] [--json]`.
 *
 * Starts the real server (`node --import tsx src/bin/server.ts`, so what runs is the source as it is,
 * never a stale `dist/`) on a fresh store, seeds pets, then drives a mixed load through autocannon
 * for a bounded time: about 50 % lists, 15 % creates (each with its own Idempotency-Key), 15 %
 * reads of existing pets and 20 % bad requests (invalid body, no key, wrong key, unknown route, bad
 * limit, missing pet, wrong content type), each kind with the one status it must get; plus, on a
 * connection of its own at a bounded rate, malformed JSON, which the server answers with
 * `Connection: close`. Every request carries `X-Request-Id: soak.<kind>`, and responses are counted
 * by the id they echo. It reports requests, req/s, statuses per kind, connection errors and
 * timeouts, latency percentiles and the server's resident memory (RSS, read from /proc every
 * second) after the warm-up and at the end; then stops the server with SIGTERM,
 * which must exit 0.
 *
 * It fails (exit code 1) on any status other than the kind's expected one, any connection error or
 * timeout, an answer without its X-Request-Id or closing a connection it should keep, an RSS growth
 * after warm-up above `--max-growth-mb`, a line the server logged at error level, or a server that
 * does not exit 0.
 *
 * The server runs with LOG_LEVEL=warn by default: at info it writes a JSON line per request,
 * which over a long soak is gigabytes of output and measures pino more than the service. Its
 * stdout is read (and discarded) line by line; warnings and errors are counted and shown.
 * PostgreSQL (`--store postgres`) uses TEST_DATABASE_URL, else DATABASE_URL, and works in a
 * schema `petstore_soak_<hex>` created for the run and dropped after it; SQLite uses a file in a
 * temporary directory removed after the run.
 *
 * This file is the command line; the parts, by role, are in `scripts/soak/`: `run-soak.ts` (the
 * runner), `seed-store.ts` and `request-mix.ts` (what is sent, and the status each kind must get),
 * `load.ts` (autocannon), `server-log.ts` (the server's warnings and errors) and `soak-report.ts`
 * (the checks and the report).
 */
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { runSoak, type SoakOptions } from './soak/run-soak.js'
import { formatReport } from './soak/soak-report.js'

export { runSoak, SOAK_HEAP_MB, warmupSecondsFor, type SoakOptions } from './soak/run-soak.js'
export { formatReport, type KindReport, type SoakReport, type SoakStore } from './soak/soak-report.js'

const USAGE = 'usage: npm run soak -- [--duration <s>=60] [--connections <n>=10] [--store sqlite|postgres] ' +
  '[--max-growth-mb <MB>=50] [--warmup <s>] [--seed <pets>=200] [--log-level <level>=warn] [--json]'

function numberOption (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new Error(`--${name} must be a non-negative number, got "${value}"`)
  return number
}

async function main (): Promise<number> {
  let options: SoakOptions
  let json: boolean
  try {
    const { values } = parseArgs({
      options: {
        duration: { type: 'string' },
        connections: { type: 'string' },
        store: { type: 'string' },
        'max-growth-mb': { type: 'string' },
        warmup: { type: 'string' },
        seed: { type: 'string' },
        'log-level': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false }
      }
    })
    if (values.help === true) {
      process.stdout.write(`${USAGE}\n`)
      return 0
    }
    if (values.store !== undefined && values.store !== 'sqlite' && values.store !== 'postgres') throw new Error(`--store must be sqlite or postgres, got "${values.store}"`)
    json = values.json === true
    options = {
      durationSeconds: numberOption('duration', values.duration),
      connections: numberOption('connections', values.connections),
      store: values.store,
      maxGrowthMb: numberOption('max-growth-mb', values['max-growth-mb']),
      warmupSeconds: numberOption('warmup', values.warmup),
      seedPets: numberOption('seed', values.seed),
      logLevel: values['log-level'],
      log: (line) => { process.stderr.write(`${line}\n`) }
    }
  } catch (error) {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`)
    return 2
  }

  // Ctrl-C stops the load; the run still stops the server and removes its store
  const interrupt = new AbortController()
  process.once('SIGINT', () => { interrupt.abort() })
  process.once('SIGTERM', () => { interrupt.abort() })

  const report = await runSoak({ ...options, signal: interrupt.signal })
  if (json) {
    process.stderr.write(`${formatReport(report)}\n`)
    process.stdout.write(`${JSON.stringify(report)}\n`)
  } else {
    process.stdout.write(`${formatReport(report)}\n`)
  }
  return report.ok ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then((code) => { process.exitCode = code }, (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
