/** Backups of the embedded database (`npx petstore backup` and `restore`): the online backup and the restore. */
export { BACKUP_COMMANDS, runBackupCommand, type BackupCommand } from './backups-cli.js'
