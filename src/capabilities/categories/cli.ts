import { eventTypesOnlyGroup } from '../../infra/cli/command-group.js'
import { CATEGORY_EVENTS } from './category-event-schemas.js'

/** Categories have no command of their own; their face for the CLI says which event types they record (`webhooks add --events` takes them). */
export const CATEGORIES_COMMAND_GROUP = eventTypesOnlyGroup('categories', CATEGORY_EVENTS.types.map(({ type }) => type))
