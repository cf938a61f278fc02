import { resolve } from 'node:path'
import type { TestEvent } from 'node:test/reporters'
import type { StoreKind } from '../../tools/harness/scratch-store.js'
import { whyStoreLeftOut } from '../../tools/harness/test-stores.js'

const STORES: readonly StoreKind[] = ['sqlite', 'postgres']

/** How a suite or test that runs on one store says which: `… (sqlite)`, `… (postgres)`. */
const STORE_MARK = /\((sqlite|postgres)\)/

interface ReportedTest {
  name: string
  nesting: number
  file?: string
  skip?: string | boolean
  todo?: string | boolean
  details?: { type?: string, error?: { message?: string, failureType?: string, cause?: unknown } }
}

/** A file's own test (node:test names it after the file's path): it fails when the file's process crashed or exited non-zero. */
function isFileItself (data: ReportedTest): boolean {
  return data.nesting === 0 && data.file !== undefined && resolve(data.name) === data.file
}

const isSet = (flag: string | boolean | undefined): boolean => flag !== undefined && flag !== false

function failureOf (data: ReportedTest): string {
  const error = data.details?.error
  const cause = error?.cause instanceof Error ? error.cause.message : undefined
  return `${data.name}: ${error?.failureType ?? 'failed'}${cause === undefined ? '' : ` (${cause.split('\n')[0] ?? ''})`}`
}

/**
 * What a run of node:test's `run()` came to, folded from the events it emits rather than from the
 * summary text it prints: a `test:fail` at any nesting (a failed or cancelled test, suite or hook, a
 * timeout, a file whose process crashed or exited non-zero), a file that reported no test at all
 * (node:test then passes the file itself), and, on Node 22 and later, a run-level `test:summary` that is
 * not a success. Also counts the tests that ran on each store, by the store their names mark.
 */
export class RunOutcome {
  /** Each test, suite, hook or file that failed or was cancelled, with its failure type. */
  readonly failures: string[] = []
  /** Files whose process ended without reporting a test, a suite or a skip. */
  readonly filesWithoutTests: string[] = []
  /** A run-level `test:summary` (Node 22 and later) said the run did not succeed. */
  summaryFailed = false
  readonly #testsPerStore = new Map<StoreKind, number>(STORES.map((kind) => [kind, 0]))
  /** Per file, the names of the tests started at each nesting: the suites around the test reported next. */
  readonly #started = new Map<string, string[]>()

  add (event: TestEvent): void {
    const type = event.type as string
    if (type === 'test:summary') {
      const summary = event.data as unknown as { file?: string, success?: boolean }
      if (summary.file === undefined && summary.success === false) this.summaryFailed = true
      return
    }
    if (type !== 'test:start' && type !== 'test:pass' && type !== 'test:fail') return
    const data = event.data as unknown as ReportedTest
    const started = this.#started.get(data.file ?? '') ?? []
    this.#started.set(data.file ?? '', started)
    if (type === 'test:start') {
      started.length = data.nesting
      started.push(data.name)
      return
    }
    if (isFileItself(data)) {
      if (type === 'test:pass') this.filesWithoutTests.push(data.name)
      else this.failures.push(failureOf(data))
      return
    }
    if (type === 'test:fail' && !isSet(data.todo)) this.failures.push(failureOf(data))
    if (data.details?.type === 'suite' || isSet(data.skip) || isSet(data.todo)) return
    const names = [...started.slice(0, data.nesting), data.name]
    const store = names.map((name) => STORE_MARK.exec(name)?.[1] as StoreKind | undefined).findLast((kind) => kind !== undefined)
    if (store !== undefined) this.#testsPerStore.set(store, (this.#testsPerStore.get(store) ?? 0) + 1)
  }

  get ok (): boolean {
    return this.failures.length === 0 && this.filesWithoutTests.length === 0 && !this.summaryFailed
  }

  /**
   * How many tests ran on each store, and why a store's cases did not run at all (`env` is the run's
   * environment, which every file's process inherits): `stores: sqlite 812, postgres 0 (PostgreSQL not
   * configured: TEST_DATABASE_URL is not set, so its cases did not run)`.
   */
  describeStores (env: Readonly<Record<string, string | undefined>>): string {
    return `stores: ${STORES.map((kind) => {
      const why = whyStoreLeftOut(kind, env)
      return `${kind} ${this.#testsPerStore.get(kind) ?? 0}${why === undefined ? '' : ` (${why})`}`
    }).join(', ')}`
  }
}
