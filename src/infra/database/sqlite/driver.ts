import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

/**
 * The Node-API level better-sqlite3 13 is built for. On Node 24 the 12.x addon (a classic
 * `node::ObjectWrap`) aborts the process when a statement or database is garbage-collected or the
 * process exits (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook); 13 uses
 * Node-API 10 instead, which Node 22.14+ and 24 have and Node 20 lacks.
 */
export const BETTER_SQLITE3_NAPI_VERSION = 10

const require = createRequire(import.meta.url)

/**
 * better-sqlite3's `Database`: version 13 where Node has Node-API 10, else (Node 20, end-of-life, still
 * the build machine's) the 12.x line installed as the optional `better-sqlite3-node20`.
 * Every module that opens a SQLite file takes it from here.
 */
export const Database: typeof BetterSqlite3 = Number(process.versions.napi) >= BETTER_SQLITE3_NAPI_VERSION
  ? require('better-sqlite3') as typeof BetterSqlite3
  : require('better-sqlite3-node20') as typeof BetterSqlite3
