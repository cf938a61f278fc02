#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { BACKUPS_COMMAND_GROUP } from '../capabilities/backups/cli.js'
import { BUSES_COMMAND_GROUP } from '../capabilities/buses/cli.js'
import { CATEGORIES_COMMAND_GROUP } from '../capabilities/categories/cli.js'
import { IDEMPOTENCY_COMMAND_GROUP } from '../capabilities/idempotency/cli.js'
import { KEYS_COMMAND_GROUP } from '../capabilities/keys/cli.js'
import { ORDERS_COMMAND_GROUP } from '../capabilities/orders/cli.js'
import { PETS_COMMAND_GROUP } from '../capabilities/pets/cli.js'
import { WEBHOOKS_COMMAND_GROUP } from '../capabilities/webhooks/cli.js'
import { CommandUsageError, onConfiguredDatabase, type CommandGroup, type CommandSpec } from '../infra/cli/command-group.js'
import { ConfigError, DEFAULT_DATA_DIR, DEFAULT_DATABASE_FILE, INSTALL_ROOT } from '../infra/config/config.js'
import { openDatabase } from '../infra/database/open-database.js'

/** `migrate`: the entry point's own command, the schema being no capability's. */
const MIGRATE_COMMAND_GROUP: CommandGroup = {
  name: 'migrate',
  summary: 'bring the database schema up to date',
  commands: { migrate: { usage: 'migrate', help: 'bring the database schema up to date and print its version', options: { json: { type: 'boolean' } } } },
  restoreReleases: [],
  run: async ({ positionals, values, env, out }) => {
    if (positionals.length > 0 || values.json !== undefined) throw new CommandUsageError('migrate takes no arguments')
    return await onConfiguredDatabase(env, async (config, database) => {
      const { database: opened, migration } = await openDatabase(config.database)
      await opened.close()
      out(migration.applied.length === 0
        ? `${database}: schema already at version ${migration.version}`
        : `${database}: applied ${migration.applied.join(', ')}; schema now at version ${migration.version}`)
      return 0
    })
  }
}

/** Every command group, in the order the usage lists their commands (and, for those that record events, the order the app registers them). */
const GROUPS: readonly CommandGroup[] = [
  KEYS_COMMAND_GROUP, MIGRATE_COMMAND_GROUP, BACKUPS_COMMAND_GROUP, IDEMPOTENCY_COMMAND_GROUP, PETS_COMMAND_GROUP, ORDERS_COMMAND_GROUP,
  CATEGORIES_COMMAND_GROUP, WEBHOOKS_COMMAND_GROUP, BUSES_COMMAND_GROUP
]

/** Each command by name: how it is called and what it does, and the group that runs it. */
const COMMANDS = new Map<string, { spec: CommandSpec, group: CommandGroup }>(
  GROUPS.flatMap((group) => Object.entries(group.commands).map(([command, spec]) => [command, { spec, group }] as const)))

/**
 * What `restore` ends in the restored copy, from each capability that holds something in the database
 * while it works (idempotency's claims in flight, webhooks' endpoint leases, the buses' leases): their groups say so.
 */
const RESTORE_RELEASES = GROUPS.flatMap((group) => group.restoreReleases)

/** The event types the feed carries, from the capabilities that record them (their groups say so): what `--events` takes. */
const EVENT_TYPES = GROUPS.flatMap((group) => group.eventTypes ?? [])

const EVENT_TYPES_NOTE = `The event types (--events, comma-separated): ${EVENT_TYPES.join(', ')}.`

const DATABASE_NOTE = `The database is the one DATABASE_URL names (default ${DEFAULT_DATABASE_FILE} in DATA_DIR, itself by default
${DEFAULT_DATA_DIR}); a relative sqlite: path or DATA_DIR is relative to the petstore installation
(${INSTALL_ROOT}), wherever the command runs.
Every command's output names the database it used.`

const USAGE = `Usage: petstore <command> [--help]

Commands:
${[...COMMANDS.values()].map(({ spec: { usage, help } }) => `  ${usage}\n      ${help.replaceAll('\n', '\n      ')}`).join('\n')}

${EVENT_TYPES_NOTE}

${DATABASE_NOTE}`

function usageOf (command: string): string {
  const { usage, help, options } = (COMMANDS.get(command) as { spec: CommandSpec }).spec
  return `Usage: petstore ${usage}\n\n${help.replaceAll('\n', ' ')}.\n\n${'events' in options ? `${EVENT_TYPES_NOTE}\n\n` : ''}${DATABASE_NOTE}`
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
class UsageError extends Error {
  constructor (message: string, readonly usage: string = USAGE) {
    super(message)
  }
}

type Output = (line: string) => void

/** One command's options, parsed strictly; `--help` anywhere asks for its usage. */
function parseCommand (command: string, args: string[], options: CommandSpec['options']) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`, usageOf(command))
  }
}

/** What the command line asks for: a usage text, or a command with its arguments. */
type Request = { help: string } | { command: string, args: string[] }

function readCommandLine (argv: readonly string[]): Request {
  const [first, second, ...rest] = argv
  if (first === undefined) throw new UsageError('a command is required')
  if (first === 'help' || first === '--help' || first === '-h') return { help: USAGE }
  if (COMMANDS.has(first)) return { command: first, args: argv.slice(1) }
  const group = GROUPS.find(({ name, commands }) => name === first && Object.keys(commands).some((command) => command.startsWith(`${first} `)))
  if (group === undefined) throw new UsageError(`unknown command "${first}"`)
  const actions = actionsOf(group.commands)
  if (second === undefined) throw new UsageError(`${first} needs an action: ${actions}`)
  if (second === '--help' || second === '-h') return { help: USAGE }
  const command = `${first} ${second}`
  if (!COMMANDS.has(command)) throw new UsageError(`unknown ${first} action "${second}"; the actions are ${actions}`)
  return { command, args: rest }
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
    const { spec, group } = COMMANDS.get(command) as { spec: CommandSpec, group: CommandGroup }
    const parsed = parseCommand(command, args, spec.options)
    if (parsed.values.help === true) {
      out(usageOf(command))
      return 0
    }
    try {
      return await group.run({ command, values: parsed.values, positionals: parsed.positionals, env, out, err, restoreReleases: RESTORE_RELEASES, eventTypes: EVENT_TYPES })
    } catch (error) {
      throw error instanceof CommandUsageError ? new UsageError(error.message, usageOf(command)) : error
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

process.exitCode = await runCli(process.argv.slice(2), process.env, (line) => { console.log(line) }, (line) => { console.error(line) })
