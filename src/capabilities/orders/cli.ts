import { eventTypesOnlyGroup } from '../../infra/cli/command-group.js'
import { ORDER_EVENTS } from './order-event-schemas.js'

/** Orders have no command of their own; their face for the CLI says which event types they record (`webhooks add --events` takes them). */
export const ORDERS_COMMAND_GROUP = eventTypesOnlyGroup('orders', ORDER_EVENTS.types.map(({ type }) => type))
