import { loadConfig, type Config } from '../config/config.js'
import { describeDatabase } from '../database/open-database.js'

/**
 * The one shape of a capability's `npx petstore` commands (its cli.ts exports one), which src/bin/cli.ts
 * loops over: the usage, the options, what runs each command, and what a restore must release.
 */

/** The options a command takes (besides --help), as node:util's parseArgs reads them. */
export type CommandOptions = Readonly<Record<string, { type: 'string' | 'boolean' }>>

/** One command: how it is called and what it does (for `--help` and the overall usage), and its options. */
export interface CommandSpec {
  usage: string
  help: string
  options: CommandOptions
}

export type Output = (line: string) => void

/** What a command runs with: its parsed arguments, the environment it reads its configuration from, the outputs. */
export interface CommandInvocation {
  /** The command's name, as the group's `commands` key it (`keys create`, `backup`). */
  command: string
  values: Record<string, string | boolean | undefined>
  positionals: string[]
  env: NodeJS.ProcessEnv
  out: Output
  err: Output
  /** What `restore` must end in the restored copy: every group's {@link CommandGroup.restoreReleases}. */
  restoreReleases: readonly string[]
  /** The event types the feed carries: every group's {@link CommandGroup.eventTypes}, in the groups' order (`webhooks add --events`). */
  eventTypes: readonly string[]
}

/** A mistake in how a command was called: printed with the command's usage, exit code 2. Changes nothing. */
export class CommandUsageError extends Error {}

export interface CommandGroup {
  /**
   * The group's word. Commands keyed `<name> <action>` are called so (`keys create`); a command keyed by
   * one word alone (`backup`) is called by that word.
   */
  name: string
  /** What the group is for, in a line. */
  summary: string
  /** Its commands by name, in the order the usage lists them. */
  commands: Readonly<Record<string, CommandSpec>>
  /** Runs one of its commands; resolves to the exit code (a {@link CommandUsageError} is a usage mistake). */
  run: (invocation: CommandInvocation) => Promise<number>
  /**
   * Statements that end, in a database restored from a backup, what this capability's processes held in the
   * replaced one (claims in flight, leases): the copy's holders are gone. SQLite; empty when it holds nothing.
   */
  restoreReleases: readonly string[]
  /**
   * The event types this capability records, as it registers them with the feed: the command line builds no app
   * to ask, so the commands that take event types (`webhooks add --events`) take every group's. Absent: none.
   */
  eventTypes?: readonly string[]
}

/** The configuration of `env`; whatever `work` fails with, the operator learns on which database. */
export async function onConfiguredDatabase (env: NodeJS.ProcessEnv, work: (config: Config, database: string) => Promise<number>): Promise<number> {
  const config = loadConfig(env)
  const database = describeDatabase(config.database)
  try {
    return await work(config, database)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new Error(message.includes(database) ? message : `${database}: ${message}`, { cause: error })
  }
}

/**
 * The group of a capability that has no command of its own and records events (pets, orders, categories): its face for
 * the CLI says which event types it records, which `webhooks add --events` takes.
 */
export function eventTypesOnlyGroup (name: string, eventTypes: readonly string[]): CommandGroup {
  return {
    name,
    summary: `no commands; the event types ${name} record`,
    commands: {},
    restoreReleases: [],
    eventTypes,
    run: async ({ command }) => { throw new Error(`${name} has no command "${command}"`) }
  }
}
