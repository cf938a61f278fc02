#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { BACKUP_COMMANDS, runBackupCommand, type BackupCommand } from '../capabilities/backups/cli.js'
import { BUS_COMMANDS, RELEASE_HELD_BUS_LEASES_SQLITE, runBusCommand } from '../capabilities/buses/cli.js'
import { KEY_COMMAND_OPTIONS, KEY_COMMANDS, KeyUsageError, prepareKeyCommand, type KeyCommand } from '../capabilities/keys/cli.js'
import { RELEASE_HELD_CLAIMS_SQLITE } from '../capabilities/idempotency/index.js'
import { RELEASE_HELD_LEASES_SQLITE, runWebhookCommand, WEBHOOK_COMMAND_OPTIONS, WEBHOOK_COMMANDS, WebhookUsageError, type WebhookCommand } from '../capabilities/webhooks/cli.js'
import { ConfigError, DEFAULT_DATA_DIR, DEFAULT_DATABASE_FILE, INSTALL_ROOT, loadConfig, type Config } from '../infra/config/config.js'
import { describeDatabase, openDatabase } from '../infra/database/open-database.js'

/** Each command: how it is called and what it does, for `--help` and the overall usage. */
const COMMANDS = {
  ...KEY_COMMANDS,
  migrate: { usage: 'migrate', help: 'bring the database schema up to date and print its version' },
  ...BACKUP_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...BUS_COMMANDS
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

/**
 * What `restore` ends in the restored copy, from each capability that holds something in the database
 * while it works (idempotency's claims in flight, webhooks' endpoint leases, the buses' leases).
 */
const RESTORE_RELEASES = [RELEASE_HELD_CLAIMS_SQLITE, RELEASE_HELD_LEASES_SQLITE, RELEASE_HELD_BUS_LEASES_SQLITE]

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
  if (first === 'migrate' || first === 'buses' || first in BACKUP_COMMANDS) return { command: first as CommandName, args: argv.slice(1) }
  if (first !== 'keys' && first !== 'webhooks') throw new UsageError(`unknown command "${first}"`)
  const actions = actionsOf(first === 'keys' ? KEY_COMMANDS : WEBHOOK_COMMANDS)
  if (second === undefined) throw new UsageError(`${first} needs an action: ${actions}`)
  if (second === '--help' || second === '-h') return { help: USAGE }
  const command = `${first} ${second}`
  if (!(command in COMMANDS)) throw new UsageError(`unknown ${first} action "${second}"; the actions are ${actions}`)
  return { command: command as CommandName, args: rest }
}

/** The actions of a command group, in words: `create, list or revoke`. */
function actionsOf (commands: Record<string, unknown>): string {
  const actions = Object.keys(commands).map((command) => command.slice(command.indexOf(' ') + 1))
  return `${actions.slice(0, -1).join(', ')} or ${actions.at(-1) ?? ''}`
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
    const parsed = parseCommand(command, args, optionsOf(command))
    if (parsed.values.help === true) {
      out(usageOf(command))
      return 0
    }
    if (command in BACKUP_COMMANDS) {
      const [file, ...extra] = parsed.positionals
      if (file === undefined || extra.length > 0) throw new UsageError(`${command} needs one file`, usageOf(command))
      return await runBackupCommand(command as BackupCommand, file, loadConfig(env).database, RESTORE_RELEASES, out, err)
    }
    if (command === 'migrate') {
      if (parsed.positionals.length > 0 || parsed.values.json !== undefined) throw new UsageError('migrate takes no arguments', usageOf(command))
      return await naming(loadConfig(env), async (config, database) => {
        const { database: opened, migration } = await openDatabase(config.database)
        await opened.close()
        out(migration.applied.length === 0
          ? `${database}: schema already at version ${migration.version}`
          : `${database}: applied ${migration.applied.join(', ')}; schema now at version ${migration.version}`)
        return 0
      })
    }
    if (command === 'buses') {
      if (parsed.positionals.length > 0) throw new UsageError('buses takes no arguments', usageOf(command))
      return await naming(loadConfig(env), async (config) => await runBusCommand(parsed.values.json === true, config, out, err))
    }
    try {
      if (command in WEBHOOK_COMMANDS) return await runWebhookCommand(command as WebhookCommand, parsed.values, parsed.positionals, loadConfig(env), out, err)
      const run = prepareKeyCommand(command as KeyCommand, parsed.values, parsed.positionals)
      return await naming(loadConfig(env), async (config) => await run(config, out, err))
    } catch (error) {
      throw error instanceof WebhookUsageError || error instanceof KeyUsageError ? new UsageError(error.message, usageOf(command)) : error
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

/** The options a command takes (besides --help). */
function optionsOf (command: CommandName): Record<string, { type: 'string' | 'boolean' }> {
  if (command in KEY_COMMAND_OPTIONS) return KEY_COMMAND_OPTIONS[command as KeyCommand]
  if (command in WEBHOOK_COMMAND_OPTIONS) return WEBHOOK_COMMAND_OPTIONS[command as WebhookCommand]
  return command in BACKUP_COMMANDS ? {} : { json: { type: 'boolean' } }
}

/** Runs `work` on the configured database; whatever fails, the operator learns on which database. */
async function naming (config: Config, work: (config: Config, database: string) => Promise<number>): Promise<number> {
  const database = describeDatabase(config.database)
  try {
    return await work(config, database)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new Error(message.includes(database) ? message : `${database}: ${message}`, { cause: error })
  }
}

process.exitCode = await runCli(process.argv.slice(2), process.env, (line) => { console.log(line) }, (line) => { console.error(line) })
