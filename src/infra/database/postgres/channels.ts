/**
 * The `NOTIFY` channels more than one capability shares; each notification's payload is the schema it
 * concerns, so installations sharing a server hear only their own.
 */
export const CHANNELS = {
  /** Notified in every transaction that records events (the change feed), heard at its commit: webhook delivery wakes on it. */
  eventsRecorded: 'petstore_events_recorded'
} as const
