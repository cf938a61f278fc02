import { CommandUsageError, type CommandGroup } from '../../infra/cli/command-group.js'
import { loadConfig, type DatabaseLocation } from '../../infra/config/config.js'
import { describeDatabase } from '../../infra/database/open-database.js'

/** `backup` and `restore`: how each is called and what it does, for the CLI's usage. */
const BACKUP_COMMANDS = {
  backup: {
    usage: 'backup <file>',
    help: `copy the SQLite database to <file> while the service keeps serving (one consistent snapshot),
checked with PRAGMA integrity_check before it reports success; on PostgreSQL use pg_dump or PITR (exit 2)`,
    options: {}
  },
  restore: {
    usage: 'restore <file>',
    help: `replace the SQLite database with the backup <file>, atomically, keeping the old file beside it;
refused while any server or command has the database open (stop the service first)`,
    options: {}
  }
} as const
type BackupCommand = keyof typeof BACKUP_COMMANDS

/** `npx petstore backup <file>` and `restore <file>`: each command a word of its own. */
export const BACKUPS_COMMAND_GROUP: CommandGroup = {
  name: 'backups',
  summary: 'copy the SQLite database while it serves, and put a copy back',
  commands: BACKUP_COMMANDS,
  restoreReleases: [],
  run: async ({ command, positionals, env, out, err, restoreReleases }) => {
    const [file, ...extra] = positionals
    if (file === undefined || extra.length > 0) throw new CommandUsageError(`${command} needs one file`)
    return await runBackupCommand(command as BackupCommand, file, loadConfig(env).database, restoreReleases, out, err)
  }
}

/** Exit code when the store cannot be backed up this way (PostgreSQL, memory): the usage-error code. */
const NOT_THIS_STORE = 2

/**
 * Runs `backup` or `restore` of `file` on the store `location` names; resolves to the exit code.
 * The store is never opened as a store: restore must be the only connection to the file. `releases`
 * are the capabilities' statements that end, in a restored copy, what the replaced database's
 * processes held (see restoreSqlite).
 */
async function runBackupCommand (command: BackupCommand, file: string, location: DatabaseLocation, releases: readonly string[],
  out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const database = describeDatabase(location)
  if (location.kind === 'postgres') {
    err(`petstore: ${command} works on the SQLite store; ${database} is PostgreSQL, whose backups are PostgreSQL's own: ` +
      'pg_dump (e.g. pg_dump --format=custom) for copies, and WAL archiving with point-in-time recovery (PITR) for production. ' +
      'See docs/operations.md#backups.')
    return NOT_THIS_STORE
  }
  if (location.kind === 'sqlite-memory') {
    err(`petstore: ${command} needs a SQLite file; ${database} lives in one process's memory only.`)
    return NOT_THIS_STORE
  }
  const { backupSqlite, restoreSqlite, SqliteBackupError } = await import('./sqlite-backup.js')
  try {
    if (command === 'backup') {
      const backup = await backupSqlite(location.path, file)
      out(`${database}: backed up ${backup.pets} pets to ${backup.file} (${backup.bytes} bytes); PRAGMA integrity_check: ok`)
    } else {
      const restore = await restoreSqlite(location.path, file, releases)
      out(`${database}: restored from ${file} (${restore.pets} pets; PRAGMA integrity_check: ok; event ids continue after ${restore.eventIdsIssuedThrough})` +
        (restore.keptAs === undefined ? '; there was no database before' : `; the database it replaced is kept as ${restore.keptAs}`))
    }
    return 0
  } catch (error) {
    if (!(error instanceof SqliteBackupError)) throw error
    err(`petstore: ${command} failed, nothing was changed: ${error.message}`)
    return 1
  }
}
