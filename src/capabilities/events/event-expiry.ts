/**
 * The one rule for a consumer that retention has passed, shared by the JSON feed's 410, a stream's start and a
 * stream catching up: a consumer at `position` (every event up to it accounted for) has missed events when
 * retention deleted one after it, that is when the highest id deleted (of the types it reads) is beyond it.
 */
export function retentionPassed (position: number, purgedThrough: number): boolean {
  return position < purgedThrough
}

/** The message of getEvent's 410 `events_expired`: retention deleted event `id` (and every one up to `purgedThrough`). */
export function eventExpiredMessage (id: number, purgedThrough: number, oldestId: number | undefined): string {
  const oldest = oldestId === undefined ? 'no event is retained now' : `the oldest retained event is ${oldestId}`
  return `Event ${id} is no longer retained: retention deleted the events up to ${purgedThrough} (${oldest}).`
}

/** The message of the 410 `events_expired` (and of a stream's final `error` message) for a consumer at `afterId`. */
export function eventsExpiredMessage (afterId: number, purgedThrough: number, oldestId: number | undefined): string {
  const oldest = oldestId === undefined ? 'no event is retained now' : `the oldest retained event is ${oldestId}`
  return `Events after ${afterId} up to ${purgedThrough} are no longer retained (${oldest}): resynchronize from the catalogue (listPets), ` +
    `then follow the feed from after=${purgedThrough}.`
}
