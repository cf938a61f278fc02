import { existsSync } from 'node:fs'
import { CommandUsageError, onConfiguredDatabase, type CommandGroup } from '../../infra/cli/command-group.js'
import { DEFAULT_DATA_DIR, DEFAULT_DATABASE_FILE, DEFAULT_KEY_CACHE_SECONDS, INSTALL_ROOT, type Config } from '../../infra/config/config.js'
import { describeDatabase, openDatabase } from '../../infra/database/open-database.js'
import { systemClock } from '../../infra/runtime/clock.js'
import { issueApiKey } from './issue-key.js'
import { API_KEY_ROLE_SCOPES, API_KEY_ROLES, DEFAULT_API_KEY_ROLE, isApiKeyRole } from './roles.js'
import { createKeyStore } from './store/create-key-store.js'
import type { ApiKeyRecord, KeyStore } from './store/key-store.js'

const REVOCATION_DELAY = `API_KEY_CACHE_SECONDS (default ${DEFAULT_KEY_CACHE_SECONDS.postgres} s on PostgreSQL, ${DEFAULT_KEY_CACHE_SECONDS.sqlite} on SQLite)`
const ROLES = API_KEY_ROLES.join('|')
const ROLE_CHOICES = `${API_KEY_ROLES.slice(0, -1).join(', ')} or ${API_KEY_ROLES.at(-1) ?? ''}`

/** The `keys` commands: how each is called and what it does, for `--help` and the overall usage. */
const KEY_COMMANDS = {
  'keys create': {
    usage: `keys create --name <name> [--role ${ROLES}]`,
    help: `create an API key and print it (shown only this once). What each role may call: ${API_KEY_ROLES.map((role) =>
      `${role}${role === DEFAULT_API_KEY_ROLE ? ' (the default)' : ''}, ${API_KEY_ROLE_SCOPES[role].replaceAll('`', '')}`).join('; ')}`
  },
  'keys list': {
    usage: 'keys list [--json]',
    help: 'list keys: id, name, role, created, last used, revoked (never a key); --json prints one JSON document for scripts'
  },
  'keys revoke': {
    usage: 'keys revoke <id>',
    help: `revoke a key; running instances reject it within their
${REVOCATION_DELAY}`
  }
} as const
type KeyCommand = keyof typeof KEY_COMMANDS

/** The options each command takes (besides --help). */
const KEY_COMMAND_OPTIONS = {
  'keys create': { name: { type: 'string' }, role: { type: 'string' } },
  'keys list': { json: { type: 'boolean' } },
  'keys revoke': { json: { type: 'boolean' } }
} as const satisfies Record<KeyCommand, Record<string, { type: 'string' | 'boolean' }>>

/** A mistake in how a command was called: the message, printed with its usage, exit code 2. */
class KeyUsageError extends CommandUsageError {}

type Output = (line: string) => void
type Values = Record<string, string | boolean | undefined>
type Run = (keys: KeyStore, database: string, out: Output, err: Output) => Promise<number>

/** `npx petstore keys …`: API keys are created, listed and revoked here only; the database holds nothing a restore must release. */
export const KEYS_COMMAND_GROUP: CommandGroup = {
  name: 'keys',
  summary: 'create, list and revoke API keys',
  commands: Object.fromEntries(Object.entries(KEY_COMMANDS).map(([command, spec]) => [command, { ...spec, options: KEY_COMMAND_OPTIONS[command as KeyCommand] }])),
  restoreReleases: [],
  run: async ({ command, values, positionals, env, out, err }) => {
    // the arguments are checked before any configuration is read
    const run = prepareKeyCommand(command as KeyCommand, values, positionals)
    return await onConfiguredDatabase(env, async (config) => await run(config, out, err))
  }
}

/**
 * Checks a `keys` command's arguments (a {@link KeyUsageError} changes nothing) and returns what runs it on
 * the configured database, before any configuration is read.
 */
function prepareKeyCommand (command: KeyCommand, values: Values, positionals: string[]): (config: Config, out: Output, err: Output) => Promise<number> {
  const run = prepare(command, values, positionals)
  return async (config, out, err) => await runOn(config, command, run, out, err)
}

async function runOn (config: Config, command: KeyCommand, run: Run, out: Output, err: Output): Promise<number> {
  const database = describeDatabase(config.database)
  if (command !== 'keys create' && config.database.kind === 'sqlite' && !existsSync(config.database.path)) {
    err(`petstore: ${database} does not exist, so it holds no keys; nothing was created.\n` +
      `The server and the CLI use the database DATABASE_URL names (default ${DEFAULT_DATABASE_FILE} in DATA_DIR, by default ${DEFAULT_DATA_DIR} relative to ${INSTALL_ROOT}).`)
    return 1
  }
  const { database: opened } = await openDatabase(config.database)
  try {
    return await run(createKeyStore(opened, systemClock), database, out, err)
  } finally {
    await opened.close()
  }
}

function prepare (command: KeyCommand, values: Values, positionals: string[]): Run {
  switch (command) {
    case 'keys create': {
      const name = typeof values.name === 'string' ? values.name.trim() : ''
      if (name === '' || positionals.length > 0) throw new KeyUsageError('keys create needs --name <name>')
      const role = values.role ?? DEFAULT_API_KEY_ROLE
      if (typeof role !== 'string' || !isApiKeyRole(role)) throw new KeyUsageError(`--role must be ${ROLE_CHOICES}, got "${String(role)}"`)
      return async (keys, database, out) => {
        const { key, record } = await issueApiKey(keys, name, role)
        out(`Created API key ${record.id} (${record.name}, role ${record.role}) in ${database}. It is shown only this once:\n\n  ${key}\n`)
        return 0
      }
    }
    case 'keys list':
      if (positionals.length > 0) throw new KeyUsageError('keys list takes no arguments but --json')
      return async (keys, database, out) => {
        const records = await keys.listApiKeys()
        out(values.json === true ? JSON.stringify({ database, keys: records }, null, 2) : formatKeys(database, records))
        return 0
      }
    case 'keys revoke': {
      const [id, ...extra] = positionals
      if (id === undefined || !/^\d+$/.test(id) || extra.length > 0 || values.json !== undefined) {
        throw new KeyUsageError('keys revoke needs the numeric id of a key (see keys list)')
      }
      return async (keys, database, out, err) => {
        // an id beyond 2^53 − 1 names no key on any database (ids stop there)
        if (!Number.isSafeInteger(Number(id)) || !await keys.revokeApiKey(Number(id))) {
          err(`petstore: no active key has id ${id} in ${database}`)
          return 1
        }
        out(`Revoked API key ${id} in ${database}; running instances reject it within their ${REVOCATION_DELAY}.`)
        return 0
      }
    }
  }
}

function formatKeys (database: string, keys: readonly ApiKeyRecord[]): string {
  if (keys.length === 0) return `No API keys in ${database}.`
  const rows = [['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((key) => [String(key.id), key.name, key.role, key.createdAt, key.lastUsedAt ?? '-', key.revokedAt ?? '-'])]
  const widths = (rows[0] as string[]).map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length)))
  const table = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd()).join('\n')
  return `API keys in ${database}:\n\n${table}`
}
