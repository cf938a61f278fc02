import { eventTypesOnlyGroup } from '../../infra/cli/command-group.js'
import { PET_EVENTS } from './pet-event-schemas.js'

/** Pets have no command of their own; their face for the CLI says which event types they record (`webhooks add --events` takes them). */
export const PETS_COMMAND_GROUP = eventTypesOnlyGroup('pets', PET_EVENTS.types.map(({ type }) => type))
