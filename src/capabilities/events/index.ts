/** The change feed (listEvents): the events every capability records, read in commit order, and their retention. */
export { events } from './events-plugin.js'
export { default as eventsRoutes } from './events-routes.js'
export { eventsExpiredMessage, retentionPassed } from './event-expiry.js'
export { ERROR_MESSAGE_EVENT } from './stream/sse-format.js'
export { EVENT_PAGE_LIMIT_DEFAULT, EVENT_PAGE_LIMIT_MAX, componentRefOf, listEventsQuerySchema } from './event-schemas.js'
export {
  EventTypeCatalogue, eventTypesOf, registerEventTypes, subjectIdOf,
  type Event, type EventType, type EventTypeDefinition, type EventTypeRegistration
} from './event-types.js'
export type { EventSerializer, SerializeEvent } from './event-serializer.js'
export {
  eventMessages, messageKeyOf, messageRefs, receiveOperation, registerEventChannel,
  type AsyncApiChannel, type AsyncApiContext, type EventChannels, type MessageFraming, type ReceiveOperation
} from './event-channels.js'
export type { EventStore } from './store/event-store.js'
export { rowToEvent, type EventRow } from './store/event-rows.js'
