import type { StoreKind } from './scratch-store.js'

type Environment = Readonly<Record<string, string | undefined>>

/** The PostgreSQL server the PostgreSQL suites use (`TEST_DATABASE_URL`); undefined when unset or blank. */
export function testDatabaseUrlIn (env: Environment): string | undefined {
  const url = env.TEST_DATABASE_URL?.trim()
  return url === '' ? undefined : url
}

/**
 * The stores the store suites run on: SQLite always, PostgreSQL when `TEST_DATABASE_URL` is set;
 * `TEST_STORES=sqlite` (or `postgres`) narrows the list.
 */
export function testStoresIn (env: Environment): StoreKind[] {
  const all: StoreKind[] = testDatabaseUrlIn(env) === undefined ? ['sqlite'] : ['sqlite', 'postgres']
  const wanted = env.TEST_STORES?.split(',').map((s) => s.trim()).filter((s) => s !== '')
  return wanted === undefined || wanted.length === 0 ? all : all.filter((kind) => wanted.includes(kind))
}

/**
 * Why `kind` is not among {@link testStoresIn}'s stores, as a phrase; undefined when it is. Without
 * `TEST_DATABASE_URL` no PostgreSQL case runs; `TEST_STORES` narrows the store suites only (the
 * PostgreSQL-only suites still run when the server is set).
 */
export function whyStoreLeftOut (kind: StoreKind, env: Environment): string | undefined {
  if (testStoresIn(env).includes(kind)) return undefined
  if (kind === 'postgres' && testDatabaseUrlIn(env) === undefined) return 'PostgreSQL not configured: TEST_DATABASE_URL is not set, so its cases did not run'
  return `TEST_STORES=${env.TEST_STORES ?? ''} leaves it out of the store suites`
}
