// Long fuzzing runs of the API from its OpenAPI document (the properties of test/fuzz/openapi-fuzz.test.ts):
//
//   npm run fuzz -- --runs 5000 [--seed 4242] [--store sqlite|postgres] [--path <replay path>]
//
// The app runs on a fresh SQLite file, or (--store postgres) on a fresh schema of TEST_DATABASE_URL that is
// dropped afterwards. Prints the cases tried and the statuses seen; on a failure, prints the shrunk request
// and exits 1. Without --seed, a random seed is used and printed, so any failure can be replayed.
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { generateApiKey, hashApiKey } from '../src/capabilities/keys/api-keys.js'
import { loadConfig } from '../src/infra/config/config.js'
import { ApiFuzzer, fuzzHostileRequests, fuzzValidCreates, fuzzValidUpdates, type PropertyResult } from '../tools/fuzz/openapi-fuzzer.js'
import { scratchStore } from '../tools/harness/scratch-store.js'

const USAGE = 'usage: npm run fuzz -- --runs N [--seed S] [--store sqlite|postgres] [--property hostile|valid|updates] [--path P]'

/** Runs one property on a fresh app and store; true when it held. */
const PROPERTIES = { hostile: fuzzHostileRequests, valid: fuzzValidCreates, updates: fuzzValidUpdates } as const
type PropertyName = keyof typeof PROPERTIES

async function runOne (name: PropertyName, store: 'sqlite' | 'postgres', runs: number, seed: number, path: string | undefined): Promise<boolean> {
  const server = process.env.TEST_DATABASE_URL?.trim()
  if (store === 'postgres' && (server === undefined || server === '')) throw new Error('--store postgres needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test')
  const target = await scratchStore(store, 'fuzz', server)
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', AUTH_FAILURE_LIMIT: '1000000', DATABASE_URL: target.url })
    const app = await buildApp({ config })
    try {
      const key = generateApiKey()
      // admin: the key may call every operation, so a 403 of its role never stands before what the fuzzer predicts
      await app.keyStore.createApiKey('fuzz', hashApiKey(key), 'admin')
      const fuzzer = await ApiFuzzer.create(app, key)
      const started = performance.now()
      const run = { seed, numRuns: runs, ...(path === undefined ? {} : { path }) }
      const result: PropertyResult = await PROPERTIES[name](fuzzer, run)
      let failure = result.failed ? result.report : undefined
      if (failure === undefined) {
        try {
          await fuzzer.verifyCatalogue()
        } catch (error) {
          failure = (error as Error).message
        }
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      process.stdout.write(`\n${name} requests on ${store} (seed ${seed}): ${result.cases} cases, ${fuzzer.stats.requests} requests, ${seconds} s, ${fuzzer.pets.size} pets created\n`)
      process.stdout.write(`  statuses: ${fuzzer.stats.summary()}\n`)
      if (failure !== undefined) process.stdout.write(`\nFAILED:\n${failure}\n`)
      return failure === undefined
    } finally {
      await app.close()
    }
  } finally {
    await target.drop()
  }
}

function isPropertyName (value: string | undefined): value is PropertyName | undefined {
  return value === undefined || Object.hasOwn(PROPERTIES, value)
}

async function main (): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      store: { type: 'string', default: 'sqlite' },
      property: { type: 'string' },
      path: { type: 'string' }
    }
  })
  const runs = Number(values.runs)
  const seed = values.seed === undefined ? randomBytes(4).readUInt32BE() >>> 1 : Number(values.seed)
  const store = values.store
  const property = values.property
  if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed) || (store !== 'sqlite' && store !== 'postgres') || !isPropertyName(property)) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  const properties = property === undefined ? Object.keys(PROPERTIES) as PropertyName[] : [property]
  let ok = true
  for (const property of properties) {
    ok = await runOne(property, store, runs, seed, values.path) && ok
  }
  if (!ok) process.stdout.write(`\nReplay: npm run fuzz -- --runs ${runs} --seed ${seed} --store ${store}${values.property === undefined ? '' : ` --property ${values.property}`}\n`)
  return ok ? 0 : 1
}

process.exitCode = await main()
