import type { CommandGroup } from '../../infra/cli/command-group.js'
import { RELEASE_HELD_CLAIMS_SQLITE } from './store/idempotency-store.js'

/**
 * Idempotency has no command of its own; its face for the CLI says what a restore must release: the claims
 * in flight of the replaced database's instances, whose requests are gone (a retry then runs afresh).
 */
export const IDEMPOTENCY_COMMAND_GROUP: CommandGroup = {
  name: 'idempotency',
  summary: 'no commands; a restore releases the Idempotency-Key claims in flight',
  commands: {},
  restoreReleases: [RELEASE_HELD_CLAIMS_SQLITE],
  run: async ({ command }) => { throw new Error(`idempotency has no command "${command}"`) }
}
