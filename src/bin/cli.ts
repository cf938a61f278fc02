#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { generateApiKey, hashApiKey } from '../auth/api-keys.js'
import { ConfigError, DEFAULT_DATABASE_URL, DEFAULT_KEY_CACHE_SECONDS, loadConfig } from '../config.js'
import { openStore } from '../store/open-store.js'
import type { ApiKeyRecord, PetStore } from '../store/pet-store.js'

const REVOCATION_DELAY = `API_KEY_CACHE_SECONDS (default ${DEFAULT_KEY_CACHE_SECONDS.postgres} s on PostgreSQL, ${DEFAULT_KEY_CACHE_SECONDS.sqlite} on SQLite)`

const USAGE = `Usage: petstore <command>

Commands:
  keys create --name <name>   create an API key and print it (shown only this once)
  keys list                   list keys: id, name, created, last used, revoked
  keys revoke <id>            revoke a key; running instances reject it within their
                              ${REVOCATION_DELAY}
  migrate                     bring the database schema up to date

The database is the one DATABASE_URL names (default ${DEFAULT_DATABASE_URL}).`

/** A mistake in how the command was called: printed with the usage, exit code 2. */
class UsageError extends Error {}

type Output = (line: string) => void

/** Runs one CLI command against the configured store; resolves to the exit code. */
async function runCli (argv: readonly string[], env: NodeJS.ProcessEnv, out: Output, err: Output): Promise<number> {
  try {
    const [command, ...rest] = argv
    if (command === undefined) throw new UsageError('a command is required')
    if (command === 'help' || command === '--help' || command === '-h') {
      out(USAGE)
      return 0
    }
    if (command !== 'keys' && command !== 'migrate') throw new UsageError(`unknown command "${command}"`)
    const config = loadConfig(env)
    const { store, migration } = await openStore(config.database)
    try {
      if (command === 'migrate') {
        if (rest.length > 0) throw new UsageError('migrate takes no arguments')
        out(migration.applied.length === 0
          ? `${store.description}: schema already at version ${migration.version}`
          : `${store.description}: applied ${migration.applied.join(', ')}; schema now at version ${migration.version}`)
        return 0
      }
      return await runKeys(store, rest, out, err)
    } finally {
      await store.close()
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`petstore: ${error.message}\n\n${USAGE}`)
      return 2
    }
    if (error instanceof ConfigError) {
      err(`petstore: configuration error: ${error.message}`)
      return 1
    }
    err(`petstore: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}

async function runKeys (store: PetStore, args: string[], out: Output, err: Output): Promise<number> {
  const [action, ...rest] = args
  switch (action) {
    case 'create': {
      const { values, positionals } = parseArgs({ args: rest, options: { name: { type: 'string' } }, allowPositionals: true, strict: true })
      const name = values.name?.trim()
      if (name === undefined || name === '' || positionals.length > 0) throw new UsageError('keys create needs --name <name>')
      const key = generateApiKey()
      const record = await store.createApiKey(name, hashApiKey(key))
      out(`Created API key ${record.id} (${record.name}). It is shown only this once:\n\n  ${key}\n`)
      return 0
    }
    case 'list': {
      if (rest.length > 0) throw new UsageError('keys list takes no arguments')
      out(formatKeys(await store.listApiKeys()))
      return 0
    }
    case 'revoke': {
      const [id, ...extra] = rest
      if (id === undefined || !/^\d+$/.test(id) || extra.length > 0) throw new UsageError('keys revoke needs the numeric id of a key (see keys list)')
      // an id beyond 2^53 − 1 names no key on any store (ids stop there)
      if (!Number.isSafeInteger(Number(id)) || !await store.revokeApiKey(Number(id))) {
        err(`petstore: no active key has id ${id}`)
        return 1
      }
      out(`Revoked API key ${id}; running instances reject it within their ${REVOCATION_DELAY}.`)
      return 0
    }
    default:
      throw new UsageError(action === undefined ? 'keys needs an action: create, list or revoke' : `unknown keys action "${action}"`)
  }
}

function formatKeys (keys: ApiKeyRecord[]): string {
  const rows = [['ID', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((key) => [String(key.id), key.name, key.createdAt, key.lastUsedAt ?? '-', key.revokedAt ?? '-'])]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
}

process.exitCode = await runCli(process.argv.slice(2), process.env, (line) => { console.log(line) }, (line) => { console.error(line) })
