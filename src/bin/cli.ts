#!/usr/bin/env node
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { generateApiKey, hashApiKey } from '../capabilities/keys/api-keys.js'
import { API_KEY_ROLES, DEFAULT_API_KEY_ROLE, isApiKeyRole } from '../capabilities/keys/roles.js'
import { ConfigError, DEFAULT_DATA_DIR, DEFAULT_DATABASE_FILE, DEFAULT_KEY_CACHE_SECONDS, INSTALL_ROOT, loadConfig } from '../infra/config/config.js'
import { describeDatabase, openStore } from '../infra/database/open-database.js'
import type { ApiKeyRecord, PetStore } from '../capabilities/pets/store/pet-store.js'
import { BACKUP_COMMANDS, runBackupCommand, type BackupCommand } from '../capabilities/backups/backups-cli.js'
import { runWebhookCommand, WEBHOOK_COMMAND_OPTIONS, WEBHOOK_COMMANDS, WebhookUsageError, type WebhookCommand } from '../capabilities/webhooks/webhooks-cli.js'

const REVOCATION_DELAY = `API_KEY_CACHE_SECONDS (default ${DEFAULT_KEY_CACHE_SECONDS.postgres} s on PostgreSQL, ${DEFAULT_KEY_CACHE_SECONDS.sqlite} on SQLite)`
const ROLES = API_KEY_ROLES.join('|')

/** Each command: how it is called and what it does, for `--help` and the overall usage. */
const COMMANDS = {
  'keys create': {
    usage: `keys create --name <name> [--role ${ROLES}]`,
    help: `create an API key and print it (shown only this once); role ${DEFAULT_API_KEY_ROLE} (default) may call
every operation, read only the operations that read`
  },
  'keys list': {
    usage: 'keys list [--json]',
    help: 'list keys: id, name, role, created, last used, revoked (never a key); --json prints one JSON document for scripts'
  },
  'keys revoke': {
    usage: 'keys revoke <id>',
    help: `revoke a key; running instances reject it within their
${REVOCATION_DELAY}`
  },
  migrate: { usage: 'migrate', help: 'bring the database schema up to date and print its version' },
  ...BACKUP_COMMANDS,
  ...WEBHOOK_COMMANDS
} as const
type CommandName = keyof typeof COMMANDS

const DATABASE_NOTE = `The database is the one DATABASE_URL names (default ${DEFAULT_DATABASE_FILE} in DATA_DIR, itself by default
${DEFAULT_DATA_DIR}); a relative sqlite: path or DATA_DIR is relative to the petstore installation
(${INSTALL_ROOT}), wherever the command runs.
Every command's output names the database it used.`

const USAGE = `Usage: petstore <command> [--help]

Commands:
${Object.values(COMMANDS).map(({ usage, help }) => `  ${usage}\n      ${help.replaceAll('\n', '\n      ')}`).join('\n')}

${DATABASE_NOTE}`

function usageOf (command: CommandName): string {
  const { usage, help } = COMMANDS[command]
  return `Usage: petstore ${usage}\n\n${help.replaceAll('\n', ' ')}.\n\n${DATABASE_NOTE}`
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
class UsageError extends Error {
  constructor (message: string, readonly usage: string = USAGE) {
    super(message)
  }
}

type Output = (line: string) => void

/** One command's options, parsed strictly; `--help` anywhere asks for its usage. */
function parseCommand<O extends Record<string, { type: 'string' | 'boolean' }>> (command: CommandName, args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`, usageOf(command))
  }
}

/** What the command line asks for: a usage text, or a command with its arguments. */
type Request = { help: string } | { command: CommandName, args: string[] }

function readCommandLine (argv: readonly string[]): Request {
  const [first, second, ...rest] = argv
  if (first === undefined) throw new UsageError('a command is required')
  if (first === 'help' || first === '--help' || first === '-h') return { help: USAGE }
  if (first === 'migrate' || first in BACKUP_COMMANDS) return { command: first as CommandName, args: argv.slice(1) }
  if (first !== 'keys' && first !== 'webhooks') throw new UsageError(`unknown command "${first}"`)
  const actions = first === 'keys' ? 'create, list or revoke' : 'add, list, remove, rotate-secret or enable'
  if (second === undefined) throw new UsageError(`${first} needs an action: ${actions}`)
  if (second === '--help' || second === '-h') return { help: USAGE }
  const command = `${first} ${second}`
  if (!(command in COMMANDS)) throw new UsageError(`unknown ${first} action "${second}"; the actions are ${actions}`)
  return { command: command as CommandName, args: rest }
}

/** Runs one CLI command against the configured store; resolves to the exit code. */
async function runCli (argv: readonly string[], env: NodeJS.ProcessEnv, out: Output, err: Output): Promise<number> {
  try {
    const request = readCommandLine(argv)
    if ('help' in request) {
      out(request.help)
      return 0
    }
    const { command, args } = request
    const parsed = command === 'keys create'
      ? parseCommand(command, args, { name: { type: 'string' }, role: { type: 'string' } })
      : command in WEBHOOK_COMMANDS
        ? parseCommand(command, args, WEBHOOK_COMMAND_OPTIONS[command as WebhookCommand] as Record<string, { type: 'string' | 'boolean' }>)
        : command in BACKUP_COMMANDS ? parseCommand(command, args, {}) : parseCommand(command, args, { json: { type: 'boolean' } })
    if (parsed.values.help === true) {
      out(usageOf(command))
      return 0
    }
    if (command in WEBHOOK_COMMANDS) {
      try {
        return await runWebhookCommand(command as WebhookCommand, parsed.values, parsed.positionals, loadConfig(env), out, err)
      } catch (error) {
        throw error instanceof WebhookUsageError ? new UsageError(error.message, usageOf(command)) : error
      }
    }
    if (command in BACKUP_COMMANDS) {
      const [file, ...extra] = parsed.positionals
      if (file === undefined || extra.length > 0) throw new UsageError(`${command} needs one file`, usageOf(command))
      return await runBackupCommand(command as BackupCommand, file, loadConfig(env).database, out, err)
    }
    const run = prepare(command as Exclude<CommandName, BackupCommand | WebhookCommand>, parsed.values, parsed.positionals)
    const config = loadConfig(env)
    const database = describeDatabase(config.database)
    if (run.readsExistingData && config.database.kind === 'sqlite' && !existsSync(config.database.path)) {
      err(`petstore: ${database} does not exist, so it holds no keys; nothing was created.\n` +
        `The server and the CLI use the database DATABASE_URL names (default ${DEFAULT_DATABASE_FILE} in DATA_DIR, by default ${DEFAULT_DATA_DIR} relative to ${INSTALL_ROOT}).`)
      return 1
    }
    try {
      const { store, migration } = await openStore(config.database)
      try {
        if (command === 'migrate') {
          out(migration.applied.length === 0
            ? `${database}: schema already at version ${migration.version}`
            : `${database}: applied ${migration.applied.join(', ')}; schema now at version ${migration.version}`)
          return 0
        }
        return await run.on(store, database, out, err)
      } finally {
        await store.close()
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      // whatever failed, the operator learns on which database
      throw new Error(message.includes(database) ? message : `${database}: ${message}`, { cause: error })
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`petstore: ${error.message}\n\n${error.usage}`)
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

interface PreparedCommand {
  /** True for commands that only make sense on a database that exists already. */
  readsExistingData: boolean
  /** Runs it on the opened store; `database` names it in the output. */
  on (store: PetStore, database: string, out: Output, err: Output): Promise<number>
}

/** Checks a command's arguments before any database is opened, and returns what it does. */
function prepare (command: Exclude<CommandName, BackupCommand | WebhookCommand>, values: Record<string, string | boolean | undefined>, positionals: string[]): PreparedCommand {
  const usage = usageOf(command)
  switch (command) {
    case 'migrate':
      if (positionals.length > 0 || values.json !== undefined) throw new UsageError('migrate takes no arguments', usage)
      return { readsExistingData: false, on: async () => 0 }
    case 'keys create': {
      const name = typeof values.name === 'string' ? values.name.trim() : ''
      if (name === '' || positionals.length > 0) throw new UsageError('keys create needs --name <name>', usage)
      const role = values.role ?? DEFAULT_API_KEY_ROLE
      if (typeof role !== 'string' || !isApiKeyRole(role)) throw new UsageError(`--role must be ${API_KEY_ROLES.join(' or ')}, got "${String(role)}"`, usage)
      return {
        readsExistingData: false,
        async on (store, database, out) {
          const key = generateApiKey()
          const record = await store.createApiKey(name, hashApiKey(key), role)
          out(`Created API key ${record.id} (${record.name}, role ${record.role}) in ${database}. It is shown only this once:\n\n  ${key}\n`)
          return 0
        }
      }
    }
    case 'keys list':
      if (positionals.length > 0) throw new UsageError('keys list takes no arguments but --json', usage)
      return {
        readsExistingData: true,
        async on (store, database, out) {
          const keys = await store.listApiKeys()
          out(values.json === true ? JSON.stringify({ database, keys }, null, 2) : formatKeys(database, keys))
          return 0
        }
      }
    case 'keys revoke': {
      const [id, ...extra] = positionals
      if (id === undefined || !/^\d+$/.test(id) || extra.length > 0 || values.json !== undefined) {
        throw new UsageError('keys revoke needs the numeric id of a key (see keys list)', usage)
      }
      return {
        readsExistingData: true,
        async on (store, database, out, err) {
          // an id beyond 2^53 − 1 names no key on any store (ids stop there)
          if (!Number.isSafeInteger(Number(id)) || !await store.revokeApiKey(Number(id))) {
            err(`petstore: no active key has id ${id} in ${database}`)
            return 1
          }
          out(`Revoked API key ${id} in ${database}; running instances reject it within their ${REVOCATION_DELAY}.`)
          return 0
        }
      }
    }
  }
}

function formatKeys (database: string, keys: ApiKeyRecord[]): string {
  if (keys.length === 0) return `No API keys in ${database}.`
  const rows = [['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((key) => [String(key.id), key.name, key.role, key.createdAt, key.lastUsedAt ?? '-', key.revokedAt ?? '-'])]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const table = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
  return `API keys in ${database}:\n\n${table}`
}

process.exitCode = await runCli(process.argv.slice(2), process.env, (line) => { console.log(line) }, (line) => { console.error(line) })
