import { EventTypeCatalogue } from '../events/index.js'
import { ORDER_EVENTS } from '../orders/index.js'
import { PET_EVENTS } from '../pets/index.js'

/**
 * The event types `webhooks add/update --events` take. The command line builds no app, so nothing registers
 * them: it names the producers' registrations itself, in src/app.ts's order (test/webhooks/cli-event-types.test.ts
 * checks this list is the one the app registers). The server's list is the app's own (`app.eventTypes`).
 */
export const CLI_EVENT_TYPES: readonly string[] = EventTypeCatalogue.of([PET_EVENTS, ORDER_EVENTS]).types
